package workers

import (
	"context"
	"fmt"
	"sync"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
)

// The process-wide registry of shared sets, by name. A set is created by the
// first Acquire of its name and closed by the release that drops its last
// reference; the entry is removed under the same lock, so a later Acquire
// creates a fresh set.
var shared struct {
	mu   sync.Mutex
	sets map[string]*sharedEntry
}

type sharedEntry struct {
	s    *Shared
	refs int
}

// Shared is a process-wide set obtained from Acquire. It has every method of
// Workers except Close: only the release functions Acquire returns close it,
// so a holder cannot close the set under the other holders, by construction.
// Each method forwards to the underlying set and documents itself there.
//
// The zero value is not usable; a Shared must not be copied. All methods are
// safe for concurrent use. After the last release the set is closed, and the
// methods that run tasks panic as they do on a closed Workers.
type Shared struct {
	w *Workers
}

// Acquire returns the process-wide set named name, creating it with New(name,
// maxWorkers, opts...) if no holder has it, and a release function the
// holder calls once when done with it (later calls do nothing). The last
// release closes the set; it panics, consuming nothing, if called from inside
// a copy of a run on that set. Every Acquire of a name returns the same *Shared
// until that name's last release.
//
// Many runtimes in one process can so share one set of workers instead of
// each starting GOMAXPROCS goroutines. maxWorkers and opts take effect only
// when the set is created; later holders get the existing set and should size
// their runs with its MaxWorkers. Runs from all holders are serialized by the
// set's run lock, which queues waiters on a sync.Mutex (FIFO once one has
// waited a millisecond: its starvation mode) and hands itself over to the
// first of them, so no holder is starved.
//
// Acquire panics for the same arguments New does, whether or not the name is
// held (its messages name Acquire); a panicking Acquire registers nothing,
// takes no reference and leaves an existing set unchanged.
func Acquire(name string, maxWorkers int, opts ...Option) (s *Shared, release func()) {
	c := newConfig("Acquire", name, maxWorkers, opts) // panics on bad arguments, before any change
	shared.mu.Lock()
	defer shared.mu.Unlock()
	e := shared.sets[name]
	if e == nil {
		e = &sharedEntry{s: &Shared{w: newFromConfig(name, maxWorkers, c)}}
		if shared.sets == nil {
			shared.sets = make(map[string]*sharedEntry)
		}
		shared.sets[name] = e
	}
	e.refs++
	released := new(bool) // guarded by shared.mu
	return e.s, func() { releaseShared(name, e, released) }
}

// releaseShared drops the reference of the release function whose flag is
// released, once. The last release closes the set, so it must not run inside
// one of the set's own copies (Close there would wait for the run it is part
// of): it then panics before changing anything, the reference
// is kept and the release function still works once the run is over.
func releaseShared(name string, e *sharedEntry, released *bool) {
	shared.mu.Lock()
	if *released {
		shared.mu.Unlock()
		return
	}
	if e.refs == 1 && e.s.w.inRun() {
		shared.mu.Unlock()
		panic(fmt.Sprintf("workers: last release of shared set %q called from inside one of its own copies: it would close the set during its own run; release it after the run", name))
	}
	*released = true
	e.refs--
	last := e.refs == 0
	if last {
		delete(shared.sets, name)
	}
	shared.mu.Unlock()
	if last {
		// Outside the registry lock: Close waits for a run in progress,
		// which must not block other names' Acquire calls.
		e.s.w.Close()
	}
}

// Name returns the set's name; see Workers.Name.
func (s *Shared) Name() string { return s.w.Name() }

// MaxWorkers returns the most workers the set may create; see
// Workers.MaxWorkers.
func (s *Shared) MaxWorkers() int { return s.w.MaxWorkers() }

// ActiveWorkers returns the number of copies Run runs; see
// Workers.ActiveWorkers.
func (s *Shared) ActiveWorkers() int { return s.w.ActiveWorkers() }

// SetActiveWorkers sets the number of copies Run runs for every holder; see
// Workers.SetActiveWorkers. Holders that need a count of their own should use
// RunN or WithCopies instead.
func (s *Shared) SetActiveWorkers(n int) int { return s.w.SetActiveWorkers(n) }

// CreatedWorkers returns the number of worker goroutines created so far; see
// Workers.CreatedWorkers.
func (s *Shared) CreatedWorkers() int { return s.w.CreatedWorkers() }

// Run runs ActiveWorkers copies of t; see Workers.Run.
func (s *Shared) Run(t tasks.Task) { s.w.Run(t) }

// RunN runs n copies of t; see Workers.RunN.
func (s *Shared) RunN(t tasks.Task, n int) { s.w.RunN(t, n) }

// ForRange runs body over [0, n); see Workers.ForRange.
func (s *Shared) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOption) {
	s.w.ForRange(n, body, opts...)
}

// RunContext runs n copies of fn with a context and errors; see
// Workers.RunContext.
func (s *Shared) RunContext(ctx context.Context, n int, fn func(ctx context.Context, worker int) error) error {
	return s.w.RunContext(ctx, n, fn)
}

// ForRangeContext runs body over [0, n) until done, ctx is done or a body
// call fails; see Workers.ForRangeContext.
func (s *Shared) ForRangeContext(ctx context.Context, n int, body func(ctx context.Context, worker, lo, hi int) error, opts ...RangeOption) error {
	return s.w.ForRangeContext(ctx, n, body, opts...)
}

// Stats returns the set's counters (all holders' runs); see Workers.Stats.
func (s *Shared) Stats() Stats { return s.w.Stats() }

// RunTeam runs a gang-scheduled team; see Workers.RunTeam.
func (s *Shared) RunTeam(name string, n int, fn func(m *team.Member)) { s.w.RunTeam(name, n, fn) }

// PlacementErrors returns the set's placement failures; see
// Workers.PlacementErrors.
func (s *Shared) PlacementErrors() []error { return s.w.PlacementErrors() }
