// Package pow is the proof-of-work example's core: find a nonce whose
// SHA-256 hash, with the puzzle's data, starts with Difficulty zero bits.
// Split searches run copies over disjoint nonce ranges (copy i of k tries
// i, i+k, i+2k, ...); the first copy to find a nonce stops the others,
// through an atomic flag or by cancelling their context.
package pow

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// MaxDifficulty is the largest difficulty a Puzzle may have.
const MaxDifficulty = 40

// Puzzle is one proof of work: a nonce n solves it when
// sha256(Data || n as 8 little-endian bytes) starts with Difficulty zero
// bits. The zero value (difficulty 0) is solved by any nonce.
type Puzzle struct {
	Data       [32]byte
	Difficulty int
}

// NewPuzzle returns the puzzle of the given seed: its data is the SHA-256
// of the seed's 8 bytes. It panics if difficulty is outside
// [0, MaxDifficulty].
func NewPuzzle(seed uint64, difficulty int) Puzzle {
	if difficulty < 0 || difficulty > MaxDifficulty {
		panic(fmt.Sprintf("pow: difficulty %d out of range [0, %d]", difficulty, MaxDifficulty))
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	return Puzzle{Data: sha256.Sum256(b[:]), Difficulty: difficulty}
}

// ZeroBits returns the number of leading zero bits of the nonce's hash.
func (p *Puzzle) ZeroBits(nonce uint64) int {
	var in [40]byte
	copy(in[:], p.Data[:])
	binary.LittleEndian.PutUint64(in[32:], nonce)
	h := sha256.Sum256(in[:])
	n := 0
	for i := 0; i < len(h); i += 8 {
		w := binary.BigEndian.Uint64(h[i:])
		n += bits.LeadingZeros64(w)
		if w != 0 {
			break
		}
	}
	return n
}

// Solves reports whether nonce solves the puzzle.
func (p *Puzzle) Solves(nonce uint64) bool { return p.ZeroBits(nonce) >= p.Difficulty }

// Solver finds a nonce that solves a puzzle. Solve must be safe to call from
// many goroutines at once.
type Solver interface {
	Name() string
	Solve(ctx context.Context, p Puzzle) (uint64, error)
}

// checkEvery is how many hashes a context-stopped copy tries between looks
// at its context (a flag-stopped copy looks before every hash); a hash costs
// on the order of 100-300 ns, so a copy overshoots by a few microseconds at
// most.
const checkEvery = 16

// Serial tries 0, 1, 2, ... on the caller, looking at ctx every checkEvery
// hashes.
type Serial struct{}

// Name returns "serial".
func (Serial) Name() string { return "serial" }

// Solve searches on the caller.
func (Serial) Solve(ctx context.Context, p Puzzle) (uint64, error) {
	for n := uint64(0); ; n++ {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		if p.Solves(n) {
			return n, nil
		}
	}
}

// found is the result of a split search, shared by its copies.
type found struct {
	// done is set once, by the copy that found a nonce (CompareAndSwap);
	// the others stop when they see it. Only the winner writes nonce, and
	// it does so before its copy returns, so the join (Wait, RunN's return)
	// orders the write before the caller's read.
	done  atomic.Bool
	nonce uint64
}

// searchFlag is copy id of k: it tries id, id+k, ... until it finds a nonce
// or another copy has.
func (f *found) searchFlag(p *Puzzle, id, k int) {
	for n := uint64(id); !f.done.Load(); n += uint64(k) {
		if p.Solves(n) {
			if f.done.CompareAndSwap(false, true) {
				f.nonce = n
			}
			return
		}
	}
}

// errFound is what the finding copy of a context-stopped search returns, so
// that the errgroup or RunContext cancels the others' context.
var errFound = errors.New("pow: found")

// searchCtx is copy id of k, stopped by ctx: it returns errFound if it
// found the nonce, nil if ctx was cancelled. It looks at ctx.Err, an atomic
// load for the standard package's contexts and for RunContext's, rather than
// at ctx.Done, whose channel a context makes on the first call (an
// allocation per search).
func (f *found) searchCtx(ctx context.Context, p *Puzzle, id, k int) error {
	for n, i := uint64(id), 0; ; n, i = n+uint64(k), i+1 {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return nil
		}
		if p.Solves(n) {
			if f.done.CompareAndSwap(false, true) {
				f.nonce = n
			}
			return errFound
		}
	}
}

// result turns a context-stopped search's error into its result.
func (f *found) result(ctx context.Context, err error) (uint64, error) {
	if errors.Is(err, errFound) || (err == nil && f.done.Load()) {
		return f.nonce, nil
	}
	if err == nil {
		err = context.Cause(ctx)
	}
	return 0, err
}

// GoWG starts Copies goroutines per search, stopped by an atomic flag, and
// waits with a sync.WaitGroup. It does not look at the context.
type GoWG struct{ Copies int }

// Name returns "go+wg".
func (GoWG) Name() string { return "go+wg" }

// Solve runs the split search.
func (g GoWG) Solve(_ context.Context, p Puzzle) (uint64, error) {
	var f found
	var wg sync.WaitGroup
	for id := range g.Copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.searchFlag(&p, id, g.Copies)
		}()
	}
	wg.Wait()
	return f.nonce, nil
}

// ErrGroup starts Copies goroutines per search with errgroup.WithContext;
// the finder's error cancels the others.
type ErrGroup struct{ Copies int }

// Name returns "errgroup".
func (ErrGroup) Name() string { return "errgroup" }

// Solve runs the split search.
func (e ErrGroup) Solve(ctx context.Context, p Puzzle) (uint64, error) {
	var f found
	g, gctx := errgroup.WithContext(ctx)
	for id := range e.Copies {
		g.Go(func() error { return f.searchCtx(gctx, &p, id, e.Copies) })
	}
	return f.result(ctx, g.Wait())
}

// Context runs the split search with RunContext on a worker set: the
// finder's error cancels the other copies' context.
type Context struct {
	Label  string
	Set    *workers.Workers
	Copies int
}

// Name returns the label.
func (c Context) Name() string { return c.Label }

// Solve runs the split search.
func (c Context) Solve(ctx context.Context, p Puzzle) (uint64, error) {
	var f found
	k := c.Copies
	err := c.Set.RunContext(ctx, k, func(ctx context.Context, id int) error { return f.searchCtx(ctx, &p, id, k) })
	return f.result(ctx, err)
}

// ContextFlag runs the split search with RunContext on a worker set, but
// its copies stop on the atomic flag, not on the context, and return nil:
// against Context it leaves out the context's Done channel and the
// cancellation by the finder's error; against Flag it adds RunContext's own
// machinery (the derived context, the error collection).
type ContextFlag struct {
	Label  string
	Set    *workers.Workers
	Copies int
}

// Name returns the label.
func (c ContextFlag) Name() string { return c.Label }

// Solve runs the split search.
func (c ContextFlag) Solve(ctx context.Context, p Puzzle) (uint64, error) {
	var f found
	k := c.Copies
	err := c.Set.RunContext(ctx, k, func(_ context.Context, id int) error {
		f.searchFlag(&p, id, k)
		return nil
	})
	return f.nonce, err
}

// Flag runs the split search as a caller-runs task on a worker set (RunN),
// stopped by an atomic flag: no context, no allocation per search beyond
// the task. It does not look at the context.
type Flag struct {
	Label  string
	Set    *workers.Workers
	Copies int
}

// Name returns the label.
func (fl Flag) Name() string { return fl.Label }

// Solve runs the split search.
func (fl Flag) Solve(_ context.Context, p Puzzle) (uint64, error) {
	t := &flagTask{p: p, k: fl.Copies}
	fl.Set.RunN(tasks.CallerRuns(t), fl.Copies)
	return t.f.nonce, nil
}

type flagTask struct {
	f found
	p Puzzle
	k int
}

func (t *flagTask) Name() string    { return "pow" }
func (t *flagTask) Work(worker int) { t.f.searchFlag(&t.p, worker, t.k) }
