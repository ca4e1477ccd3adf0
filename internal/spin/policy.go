package spin

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
)

// Policy is the wait policy of one dispatcher (package gang), its one seam
// with the protocol: gang asks it where a goroutine waits (Idle, End) and
// calls Ended where a copy woke the parked coordinator. It only spins or
// yields, and touches no protocol word. It must not be copied.
//
// The rule: a waiter spins only while a processor would otherwise idle. The
// processors are Procs(); while a run is under way its copies need them;
// while other processes' threads wait for the CPUs none idles (Allow). A
// waiter that may not spin parks at once, as sync.WaitGroup.Wait does. No
// state passes from one run to the next but each worker's count of runs that
// did not need it, which only the set's own runs change.
type Policy struct {
	budget atomic.Int64 // ns; read by each wait, written by SetBudget
}

// NewPolicy returns a policy with the Idle budget.
func NewPolicy() *Policy {
	p := &Policy{}
	p.SetBudget(Idle)
	return p
}

// SetBudget sets how long a waiter the rule lets spin spins (d >= 0).
func (p *Policy) SetBudget(d time.Duration) { p.budget.Store(int64(d)) }

// Waiter is one idle worker's wait state, owned by its goroutine; the zero
// value is ready.
type Waiter struct {
	misses int8 // runs in a row that did not need the worker, up to 2
}

// Idle spins until done (a new run) if the rule lets idle worker i spin, and
// reports whether done returned true. Between runs the goroutine that starts
// the next one needs a processor and the last run's copies needed the
// others: worker i spins if i < Procs() and the last run needed it (needed);
// after one run that did not, an eighth of the budget; after two, not at all.
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

// End spins until done (the run ended) while the rule lets the coordinator
// spin, and reports whether done returned true. running returns how many of
// the run's copies have not returned (the coordinator runs none of them now);
// each needs a processor, so the coordinator spins only while they are fewer
// than Procs(), and parks as soon as they are not.
//
// It reads the view as it stands, never refreshing it: a refresh makes
// system calls, which belong off the run's critical path (the idle workers
// refresh it as they park).
func (p *Policy) End(running func() int, done func() bool) bool {
	procs, ended := Procs(), false
	budget := time.Duration(p.budget.Load())
	if !allowed(view.word.Load()) {
		budget = 0
	}
	until(budget, func() bool {
		ended = done()
		return ended || running() >= procs
	}, false)
	return ended
}

// Ended is called by the copy that ended a run and woke its parked
// coordinator. The runtime readied the coordinator onto this goroutine's
// processor (runnext), where it runs only once this goroutine blocks or
// yields (an idle processor steals it only after microseconds); this
// goroutine is about to wait, so it yields the processor.
func (p *Policy) Ended() { runtime.Gosched() }

// A late loop: on a crowded machine (Crowded) a woken worker may wait for a
// CPU longer than a loop lasts, and one that arrives at the end holds the
// loop up if the kernel preempts it in a chunk. So a caller-runs loop starts
// late (Late): its caller claims chunks alone, and its workers are woken
// when LateWake says so, and in any case LateBound after the start, so that
// copies that wait for each other always meet. The policy decides when the
// workers wake, never whether. go run ./perf -scenario contended measures
// the rule; the pickup line of the perf header is the wait for a CPU.
const (
	// LateAfter is how long a late loop's caller claims alone before it
	// estimates the time left.
	LateAfter = 20 * time.Microsecond
	// LateLeft is the time left from which the caller wakes its workers:
	// about a woken worker's wait for a CPU on a crowded 2-CPU machine.
	LateLeft = time.Millisecond
	// LateBound is the latest a late run's workers are woken, whatever
	// its caller does (gang's timer).
	LateBound = time.Millisecond
)

// Late reports whether a caller-runs loop starts late: the machine is
// crowded.
func Late() bool { return Crowded() }

// LateWake is asked after each chunk that a late loop's caller claims,
// spent after the loop's start, with claimed of its n iterations claimed.
// It reports whether the caller decides now (LateAfter has passed), and if
// so whether it wakes the workers: at the rate so far, at least LateLeft
// is left (spent*(n-claimed) >= LateLeft*claimed, in 128 bits: no n
// overflows it).
func LateWake(spent time.Duration, claimed, n int) (decided, wake bool) {
	if spent < LateAfter {
		return false, false
	}
	if claimed >= n {
		return true, false
	}
	hiA, loA := bits.Mul64(uint64(spent), uint64(n-claimed))
	hiB, loB := bits.Mul64(uint64(LateLeft), uint64(max(claimed, 0)))
	return true, hiA > hiB || hiA == hiB && loA >= loB
}

// Backoff is the wait of a goroutine that polls for an event nobody wakes it
// for at once (the work-stealing Terminator's master), in HotSpot's three
// stages: spin rounds that poll 2^k times, then yields until about Default
// has passed, then naps that double up to MaxNap. Where waiters may not
// spin (Allow) it yields only for Oversubscribed.
type Backoff struct {
	round       int
	budget, nap time.Duration
	start       time.Time
}

const (
	spinRounds = 12 // 2^12 polls in all: a few microseconds
	MaxNap     = time.Millisecond
)

// NewBackoff starts a wait.
func NewBackoff() Backoff {
	b := Backoff{budget: Default, nap: 10 * time.Microsecond, start: time.Now()}
	if Allow(Default) == 0 {
		b.round, b.budget = spinRounds, Oversubscribed
	}
	return b
}

// Next waits one step, polling done while it spins, and returns 0; or, past
// the yields, returns how long to nap (the caller naps, so that it can be
// woken).
func (b *Backoff) Next(done func() bool) (nap time.Duration) {
	switch {
	case b.round < spinRounds:
		for range 1 << b.round {
			if done() {
				break
			}
		}
		b.round++
	case time.Since(b.start) < b.budget:
		runtime.Gosched()
	default:
		nap, b.nap = b.nap, min(2*b.nap, MaxNap)
	}
	return nap
}
