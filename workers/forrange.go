package workers

import (
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/tasks/ranges"
)

// A RangeOption tunes a loop (ForRange, ForChunks, ForRangeContext); a later
// option overrides an earlier one of its kind (WithChunk and WithGuided are
// both the schedule). The zero RangeOption is invalid.
type RangeOption struct {
	kind rangeOptionKind
	n    int
}

type rangeOptionKind uint8

const (
	_ rangeOptionKind = iota // the zero RangeOption
	optChunk
	optCopies
	optWorkersOnly
	optGuided
)

// WithChunk sets the number of iterations a copy claims at a time (the
// dynamic schedule with that chunk). ForRange panics if n < 1.
func WithChunk(n int) RangeOption { return RangeOption{optChunk, n} }

// WithGuided makes the copies claim chunks that shrink as the loop drains,
// max(minChunk, remaining/(2*copies)) iterations each (OpenMP's guided
// schedule). ForRange panics if minChunk < 1.
func WithGuided(minChunk int) RangeOption { return RangeOption{optGuided, minChunk} }

// WithCopies sets the number of copies (never more than the chunks).
// ForRange panics if n is outside [1, MaxWorkers].
func WithCopies(n int) RangeOption { return RangeOption{optCopies, n} }

// WithWorkersOnly keeps the body off the caller (for placed workers); each
// loop then pays a hand-off.
func WithWorkersOnly() RangeOption { return RangeOption{kind: optWorkersOnly} }

// ForRange runs body over [0, n) and returns when every iteration is done.
// Copies claim chunks of the range one at a time, so faster copies take
// more; body(worker, lo, hi) runs iterations lo..hi-1 for copy worker. The
// caller runs copies too (not WithWorkersOnly), so a loop of one chunk runs
// inline. Options set the schedule (WithChunk, WithGuided) and the copies
// (WithCopies; default ActiveWorkers, at most GOMAXPROCS and the chunks).
// ForRange allocates nothing once warm; the memory model and panics are
// those of RunN. It panics if n < 0, body is nil or an option is invalid.
func (w *set) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOption) {
	r := w.rangeSetup("ForRange", n, body != nil, opts)
	if n == 0 {
		return
	}
	t := rangePool.Get().(*rangeTask)
	copies := t.loop.reset(n, r)
	t.body = body
	t.callerRuns = r.callerRuns
	w.runN("ForRange", t, copies)
	t.body = nil // do not keep the closure alive from the pool
	rangePool.Put(t)
}

// Do calls fn(i) for each i in [0, n) and returns when all have returned: go
// + sync.WaitGroup on the set, the caller taking part. At most ActiveWorkers
// calls (and GOMAXPROCS) run at once; they must not wait for each other.
// Memory model and panics are those of RunN. It panics if n < 0 or fn is nil.
func (w *set) Do(n int, fn func(i int)) {
	r := w.rangeSetup("Do", n, fn != nil, doOptions)
	if n == 0 {
		return
	}
	t := rangePool.Get().(*rangeTask)
	copies := t.loop.reset(n, r)
	t.each, t.callerRuns = fn, true
	t.loop.cur = slices.Grow(t.loop.cur[:0], copies)[:copies]
	defer renameCopy(t.loop.cur)
	w.runN("Do", t, copies)
	t.each = nil
	rangePool.Put(t)
}

// doOptions is Do's schedule: one i per claim.
var doOptions = []RangeOption{WithChunk(1)}

// ForChunks is ForRange for bodies with state of their own: body runs once
// per copy and ranges over the chunks that copy claims, so scratch memory is
// made once per copy (copy ids are not safe keys on a set with concurrent
// runs). Each body must range over its chunks to the end; ForChunks panics if
// iterations were left unclaimed. Options and panics are those of ForRange.
func (w *set) ForChunks(n int, body func(chunks iter.Seq2[int, int]), opts ...RangeOption) {
	r := w.rangeSetup("ForChunks", n, body != nil, opts)
	if n == 0 {
		return
	}
	// Not pooled: a chunks iterator kept past its copy must find its own,
	// drained loop, never a later run's. The task and its iterator (one for
	// every copy: each call of it claims afresh) are the call's allocations.
	t := &chunksTask{body: body, callerRuns: r.callerRuns}
	t.chunks = t.claim
	copies := t.loop.reset(n, r)
	w.runN("ForChunks", t, copies)
	if t.loop.Claimed() < n {
		panic(fmt.Sprintf("workers: ForChunks on %q: %d of %d iterations never claimed: every copy's body must range over its chunks to the end", w.name, n-t.loop.Claimed(), n))
	}
}

// chunksTask is the task ForChunks runs: each copy hands body an iterator
// over the chunks it claims.
type chunksTask struct {
	loop       rangeLoop
	body       func(chunks iter.Seq2[int, int])
	chunks     iter.Seq2[int, int] // claim, as a func value made once per call
	callerRuns bool
}

func (t *chunksTask) Name() string       { return "workers.ForChunks" }
func (t *chunksTask) CallerCanRun() bool { return t.callerRuns }

func (t *chunksTask) Work(int) {
	t.loop.begin()
	t.body(t.chunks)
	t.loop.end()
}

func (t *chunksTask) loopOf() *rangeLoop { return &t.loop }

// claim yields the chunks the ranging copy claims, until the loop is drained
// or the copy stops ranging.
func (t *chunksTask) claim(yield func(lo, hi int) bool) {
	for {
		lo, hi, ok := t.loop.next()
		if !ok || !yield(lo, hi) {
			return
		}
	}
}

// rangeConfig is ForRange's options applied: copies, the schedule (chunk for
// the dynamic one, or minChunk > 0 for the guided one; neither: the default,
// which reset picks) and caller-runs.
type rangeConfig struct {
	copies, chunk, minChunk int
	callerRuns              bool
	shared                  bool // the set has concurrent runs
	// The wait policy's view, read once as the loop starts (spin.ForLoop).
	crowded, queued bool
}

// rangeSetup checks ForRange's arguments and applies its options. The panics
// are out of line to keep its frame small.
func (w *set) rangeSetup(op string, n int, haveBody bool, opts []RangeOption) (r rangeConfig) {
	if n < 0 || !haveBody {
		w.panicRangeArgs(op, n, haveBody)
	}
	// The copies without WithCopies: ActiveWorkers, but at most the
	// processors the program may use now (GOMAXPROCS, read at most every
	// few ms), so a loop follows GOMAXPROCS down when the program lowers it.
	procs := 0
	procs, r.crowded, r.queued = spin.ForLoop()
	r.copies, r.callerRuns, r.shared = max(1, min(w.ActiveWorkers(), procs)), true, w.concurrent
	for i, o := range opts {
		switch o.kind {
		case optChunk:
			if o.n < 1 {
				w.panicRangeOption(op, i, o)
			}
			r.chunk, r.minChunk = o.n, 0
		case optGuided:
			if o.n < 1 {
				w.panicRangeOption(op, i, o)
			}
			r.chunk, r.minChunk = 0, o.n
		case optCopies:
			if o.n < 1 || o.n > w.MaxWorkers() {
				w.panicRangeOption(op, i, o)
			}
			r.copies = o.n
		case optWorkersOnly:
			r.callerRuns = false
		default:
			w.panicRangeOption(op, i, o)
		}
	}
	return r
}

// rangeLoop is the loop of a ForRange task, with a fixed chunk or a guided
// schedule. While a busy run's copies run on its caller, busy (nil before a
// rest runs) is the lock they watch: next claims nothing once it looks free
// and sets left (atomic: a body may range in goroutines of its own); left is
// false again when runBusy returns (a task whose run panics or exits is not
// reused), so reset needs no store. open, true while a copy runs, tells a copy
// that follows a failed one to drain the loop. busy and open: the caller's.
// cur[copy] is the i Do's or RunContext's copy is running (renameCopy).
type rangeLoop struct {
	ranges.Loop
	busy *runLock
	open bool
	left atomic.Bool
	cur  []int
}

func (l *rangeLoop) next() (lo, hi int, ok bool) {
	if l.busy != nil && l.busy.free() {
		l.left.Store(true)
		return 0, 0, false
	}
	return l.Next()
}

// drain, deferred by runBusy, drains on the caller what the watch left when
// a Goexit (or a panic raised instead) ends a pass, as the copies after the
// failed one would have; then that panic, else one of drain's, is raised.
func (l *rangeLoop) drain(plan gang.Plan, n int) {
	if !l.left.Load() {
		return // runBusy returned, or no copy stopped for the watch
	}
	v := recover() // nil on a Goexit, which goes on
	l.busy = nil
	if q := gang.RunOnCaller(plan, n); v == nil {
		repanic(q) // nil: the Goexit goes on
	} else {
		panic(v)
	}
}

// begin and end bracket a copy's claims (see rangeLoop).
func (l *rangeLoop) begin() {
	if l.busy != nil {
		if l.open {
			l.busy = nil
		}
		l.open = true
	}
}

func (l *rangeLoop) end() {
	if l.busy != nil {
		l.open = false
	}
}

// reset makes l the loop of a run over [0, n) with r's schedule and returns
// the number of copies to run: r.copies, but never more than there are
// chunks. It runs before the run, so no copy reads l concurrently.
//
// A loop on a contended machine (the wait policy's hint Load) runs one copy,
// on the caller alone, as if serial: a worker woken for it would wait for a
// CPU and the caller for that worker. On a set with concurrent runs the same
// holds while the process's own goroutines wait for processors (a server's
// requests, spin.ForLoop). WithWorkersOnly keeps the copies. A loop alone on
// its caller runs the default schedule as one chunk: nothing to balance, the
// body called once, as serial code would call it.
func (l *rangeLoop) reset(n int, r rangeConfig) (copies int) {
	alone := r.callerRuns && r.copies > 1 && (r.crowded || r.shared && r.queued)
	if r.chunk == 0 && r.minChunk == 0 { // the default schedule
		r.chunk = ranges.ChunkSize(n, r.copies)
		if alone {
			r.chunk = max(n, 1)
		}
	}
	if alone {
		r.copies = 1
	}
	l.busy, l.open = nil, false // left is false: see rangeLoop
	if r.minChunk == 0 {
		l.Reset(n, r.chunk)
		return min(r.copies, l.NumChunks())
	}
	// Chunk sizes depend on the copies: reset again in the rare case of
	// fewer chunks than copies.
	l.ResetGuided(n, r.minChunk, r.copies)
	if copies = min(r.copies, l.NumChunks()); copies < r.copies {
		l.ResetGuided(n, r.minChunk, copies)
	}
	return copies
}

//go:noinline
func (w *set) panicRangeArgs(op string, n int, haveBody bool) {
	if n < 0 {
		panic(fmt.Sprintf("workers: %s on %q: negative length %d", op, w.Name(), n))
	}
	panic(fmt.Sprintf("workers: %s on %q: nil body", op, w.Name()))
}

//go:noinline
func (w *set) panicRangeOption(op string, i int, o RangeOption) {
	switch o.kind {
	case optChunk:
		panic(fmt.Sprintf("workers: %s on %q: WithChunk(%d): chunk < 1", op, w.Name(), o.n))
	case optGuided:
		panic(fmt.Sprintf("workers: %s on %q: WithGuided(%d): minChunk < 1", op, w.Name(), o.n))
	case optCopies:
		hint := ""
		if o.n > w.MaxWorkers() {
			hint = "; a loop needs no more copies than workers (a smaller WithChunk balances finer)"
		}
		panic(fmt.Sprintf("workers: %s on %q: WithCopies(%d) out of range [1, %d]%s", op, w.Name(), o.n, w.MaxWorkers(), hint))
	}
	panic(fmt.Sprintf("workers: %s on %q: option %d is the zero RangeOption", op, w.Name(), i))
}

// rangePool and rangeCtxPool recycle the tasks of ForRange and Do, and of
// RunContext and ForRangeContext, so that a call allocates no task. A task is
// put back only after its run returned, that is after every copy of the run
// has returned, so no copy of an old run can touch a recycled task; a run
// that panics puts nothing back (the Put is not deferred), leaving its task
// to the garbage collector rather than returning one whose loop a late
// reader might still see.
var (
	rangePool    = sync.Pool{New: func() any { return new(rangeTask) }}
	rangeCtxPool = sync.Pool{New: func() any { return new(rangeCtxTask) }}
)

// rangeTask is the task ForRange and Do run: copies drain loop, calling body
// for each chunk (ForRange) or each for each of its iterations (Do).
type rangeTask struct {
	loop       rangeLoop
	body       func(worker, lo, hi int)
	each       func(i int)
	callerRuns bool
}

func (t *rangeTask) Name() string {
	if t.each != nil {
		return "workers.Do"
	}
	return "workers.ForRange"
}
func (t *rangeTask) CallerCanRun() bool { return t.callerRuns }

func (t *rangeTask) loopOf() *rangeLoop { return &t.loop }

func (t *rangeTask) Work(worker int) {
	t.loop.begin()
	for {
		lo, hi, ok := t.loop.next()
		if !ok {
			t.loop.end()
			return
		}
		if t.each == nil {
			t.body(worker, lo, hi)
			continue
		}
		for i := lo; i < hi; i++ {
			t.loop.cur[worker] = i // read after the run, which ends after this copy
			t.each(i)
		}
	}
}
