package spin

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Policy is the wait policy of one dispatcher (package gang), its one seam
// with the protocol: gang asks it where a goroutine waits (Idle, End) and
// tells it where a copy woke a parked coordinator (Ended), nowhere else.
// Every method only spins or yields: none touches the protocol's words. Make
// one with NewPolicy; it must not be copied.
//
// One rule decides every wait (gang/README.md has it as a table): a waiter
// spins only while a processor would otherwise idle. The processors are
// Procs(); the goroutines that need them while a run is under way are the
// run's worker copies; while other processes' threads wait for the CPUs
// (Allow), no processor idles. A waiter that may not spin parks at once, as
// sync.WaitGroup.Wait does, and the runtime hands its processor over. The
// policy keeps no state from one run for the next but each worker's count of
// runs that did not need it, which only the set's own runs change.
type Policy struct {
	budget atomic.Int64 // the set's spin budget in ns (SetBudget)
}

// NewPolicy returns a dispatcher's policy with the Default budget.
func NewPolicy() *Policy {
	p := &Policy{}
	p.SetBudget(Default)
	return p
}

// SetBudget sets how long a waiter that the rule lets spin spins before it
// parks (d >= 0).
func (p *Policy) SetBudget(d time.Duration) { p.budget.Store(int64(d)) }

// Waiter is one idle worker's wait state; the zero value is ready. It belongs
// to the worker's goroutine (a replacement receives it with the go statement
// that starts it).
type Waiter struct {
	misses int8 // runs in a row that did not need the worker, up to 2
}

// Idle spins until done (a new run word) if the rule lets idle worker i
// spin, and reports whether done returned true; the worker parks if not.
// needed tells whether the run the worker saw last needed it. Between runs
// the goroutine that starts the next one needs a processor, and the worker
// copies of the last run needed the others; so worker i spins if i < Procs()
// and the last run needed it (the next run likely needs it too); after one
// run that did not, an eighth of the budget (a phase of a smaller n between
// two of the same); after two, not at all: a surplus worker parks and costs
// nothing.
func (p *Policy) Idle(w *Waiter, i int, needed bool, done func() bool) bool {
	switch {
	case needed:
		w.misses = 0
	case w.misses < 2:
		w.misses++
	}
	budget := time.Duration(p.budget.Load())
	switch {
	case i >= Procs() || w.misses > 1:
		budget = 0
	case w.misses == 1:
		budget /= 8
	}
	return Until(Allow(budget), done)
}

// End spins until done (the end of the current run) while the rule lets
// the coordinator spin, and reports whether done returned true; the
// coordinator parks if not. running returns how many of the run's copies
// have not returned yet (a plain run's coordinator runs none; a caller-runs
// caller has claimed every copy it could); each needs a processor until it
// returns, whoever runs it, so the coordinator spins only while they are
// fewer than Procs(), and parks as soon as they are not.
func (p *Policy) End(running func() int, done func() bool) bool {
	budget := Allow(time.Duration(p.budget.Load()))
	procs := Procs()
	ended := false
	Until(budget, func() bool { ended = done(); return ended || running() >= procs })
	return ended
}

// Ended is called by the copy that ended a run and woke its parked
// coordinator: the runtime readied the coordinator onto this goroutine's
// processor (its runnext slot), where it runs only once this goroutine blocks
// or yields; an idle processor would take it only after a pause of
// microseconds. The coordinator needs the processor and this goroutine is
// about to wait, so it yields it.
func (p *Policy) Ended() { runtime.Gosched() }
