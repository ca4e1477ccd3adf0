// Package spin is workgang's one wait policy: every decision of the module on
// how long a goroutine waits is made here (one row each in gang/README.md's
// "The wait policy"). The rule: a waiter spins only while a processor would
// otherwise idle, else parks at once. It decides when goroutines run, never
// whether: any budget and any view of the machine give the same results.
package spin

import (
	"math"
	"math/bits"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/internal/load"
	"github.com/workgang/workgang/internal/pad"
)

// The policy's numbers, and why.
const (
	// Default: a semaphore's, a team barrier's and the Terminator's budget,
	// a few times what parking and waking a goroutine costs.
	Default = 50 * time.Microsecond
	// Idle: a set's budget unless WithSpin sets one. A pause's or a solver's
	// phases come every 100 us to 1 ms and find the workers spinning; an
	// idle program stops spinning within 1 ms. Cost: docs/perf.md ("Idle
	// CPU"); gain: go run ./perf/compare.
	Idle = time.Millisecond
	// Oversubscribed: the Terminator's yields when it may not spin, about
	// what parking and waking costs.
	Oversubscribed = 3 * time.Microsecond
	// A late loop's caller claims alone for LateAfter, then wakes the
	// workers if LateLeft (a woken worker's wait for a CPU on a crowded
	// 2-CPU machine) or more is left; gang's timer wakes them at LateBound.
	LateAfter = 20 * time.Microsecond
	LateLeft  = time.Millisecond
	LateBound = time.Millisecond
	MaxNap    = time.Millisecond // the Backoff's longest nap

	refreshEvery = 2 * time.Millisecond // the view's greatest age while waiters wait
	// maxBurst polls between yields: a microsecond or two, too short to hold
	// up a goroutine queued behind, long enough to amortize yield and clock.
	maxBurst = 1024
	// endPolls is the coordinator's last look before it parks at n >= P:
	// about the time the copies of an empty run take to end on the other
	// processors, while a park and the wake-up cost two goroutine switches.
	// Longer looks delay a copy queued on the coordinator's processor:
	// go run ./perf -scenario interleaved, empty and W = 1-5 us plain rows.
	endPolls   = 256
	spinRounds = 12 // the Backoff's 2^12 polls in all: a few microseconds
)

// A Hint rests on a reading of the machine; results are the same with it on
// or off. Load: no spinning while other processes' threads wait for the CPUs
// (internal/load, the one reading beyond GOMAXPROCS).
type Hint uint32

const (
	Load     Hint = 1
	allHints      = Load
)

var hints atomic.Uint32 // in force: from WORKGANG_WAIT, by tests and the gate

func init() { hints.Store(uint32(ParseHints(os.Getenv("WORKGANG_WAIT")))) }

// ParseHints returns the hints a WORKGANG_WAIT value leaves on: "" or "all",
// every hint; "plain" or "-load", none; "plain,load", load. Other names (an
// older release's hints) are ignored: an old setting never stops a program.
func ParseHints(v string) Hint {
	h := allHints
	for _, f := range strings.Split(strings.ToLower(v), ",") {
		switch strings.TrimSpace(f) {
		case "plain", "-load":
			h = 0
		case "all", "load":
			h = allHints
		}
	}
	return h
}

// On reports whether hint h is in force.
func On(h Hint) bool { return Hint(hints.Load())&h != 0 }

// SetHints sets the hints in force and returns the previous set.
func SetHints(h Hint) (old Hint) {
	old = Hint(hints.Swap(uint32(h & allHints)))
	Refresh()
	return old
}

// The view: the processors and whether other processes' threads wait for the
// CPUs, in one read-mostly word (one load reads a consistent pair). Reading
// the load costs system calls, so only waiters refresh a view older than
// refreshEvery, one at a time: a spinner between bursts (Until), a waiter that
// may not spin (Allow), a late loop's start (Late). Staleness costs timing.
var view struct {
	_      pad.Line
	word   atomic.Uint64 // procs<<1 | contended; 0 before the first reading
	next   atomic.Int64  // when the view goes stale (ns since start)
	_      pad.Line
	mu     sync.Mutex // orders refreshes, Refresh and ForceView; guards forced
	forced bool
}

var start = time.Now()

// Procs returns the processors of the view: GOMAXPROCS, at most
// runtime.NumCPU (the process's mask at start, not the calling thread's).
func Procs() int {
	if view.word.Load() == 0 {
		Refresh() // first use
	}
	return int(view.word.Load() >> 1)
}

func procsNow() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// current returns the view, refreshed first if stale and nobody refreshes it.
func current() uint64 {
	now := int64(time.Since(start))
	if now >= view.next.Load() && view.mu.TryLock() {
		if !view.forced {
			procs := procsNow()
			contended := On(Load) && load.OthersWaiting(procs)
			view.next.Store(now + int64(refreshEvery))
			view.word.Store(viewWord(procs, contended))
		}
		view.mu.Unlock()
	}
	return view.word.Load()
}

// Refresh reads the processors now and leaves the load to the next waiter;
// the mutex orders it after a refresh in flight, which may have read
// GOMAXPROCS before a change.
func Refresh() {
	view.mu.Lock()
	if !view.forced {
		view.word.Store(viewWord(procsNow(), false))
		view.next.Store(0)
	}
	view.mu.Unlock()
}

func viewWord(procs int, contended bool) uint64 {
	if contended {
		return uint64(procs)<<1 | 1
	}
	return uint64(procs) << 1
}

// ForceView fixes the view until restore is called (for tests).
func ForceView(procs int, contended bool) (restore func()) {
	view.mu.Lock()
	view.forced = true
	view.next.Store(math.MaxInt64) // no waiter tries to refresh it
	view.word.Store(viewWord(procs, contended))
	view.mu.Unlock()
	return func() {
		view.mu.Lock()
		view.forced = false
		view.mu.Unlock()
		Refresh()
	}
}

// Budget is Allow(Default).
func Budget() time.Duration { return Allow(Default) }

// Allow returns budget, or 0 with one processor (the awaited goroutine
// cannot run while the waiter spins) or while other processes wait for the
// CPUs (Load). Only a waiter that may not spin refreshes a stale view here:
// a spinner's Until does.
func Allow(budget time.Duration) time.Duration {
	if budget > 0 && maySpin() {
		return budget
	}
	return 0
}

func maySpin() bool         { return allowed(view.word.Load()) || allowed(current()) }
func allowed(w uint64) bool { return w>>1 > 1 && (w&1 == 0 || !On(Load)) }

// Until polls done until it returns true (and reports so) or about budget has
// passed; budget <= 0 polls once. Between bursts it yields, so the awaited
// goroutine runs even with more spinners than processors, refreshes a stale
// view, and stops once waiters may not spin: the load hint holds at any budget.
func Until(budget time.Duration, done func() bool) bool {
	return until(budget, done, true)
}

// until is Until; refresh false leaves the view alone (Policy.End).
func until(budget time.Duration, done func() bool, refresh bool) bool {
	if done() {
		return true
	}
	if budget <= 0 {
		return false
	}
	t0 := time.Now()
	for {
		for range maxBurst {
			if done() {
				return true
			}
		}
		if time.Since(t0) >= budget || refresh && !allowed(current()) {
			return false
		}
		runtime.Gosched()
		if done() {
			return true
		}
	}
}

// Policy is one dispatcher's (package gang) seam with the wait policy: it
// only spins or yields, touching no protocol word. No state passes from one
// run to the next but each worker's Waiter, which only the set's own runs
// change. It must not be copied.
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

// Waiter is one idle worker's state, owned by its goroutine; zero is ready.
type Waiter struct {
	misses int8 // runs in a row that did not need the worker, up to 2
}

// Idle spins until done (a new run) if the rule lets idle worker i spin, and
// reports whether done returned true. The next run's starter needs a
// processor, the last run's copies the others: worker i spins if i < Procs()
// and the last run needed it; after one run that did not, an eighth of the
// budget; after two, not at all.
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

// End spins until done (the run ended), and reports whether it returned true,
// while running (copies not returned, each needing a processor) < Procs();
// then, with a budget, it takes a last look of endPolls polls before the
// caller parks. It never refreshes the view: idle workers do, off the run's
// critical path.
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
	for i := 0; budget > 0 && !ended && i < endPolls; i++ {
		ended = done()
	}
	return ended
}

// Ended is called by the copy that ended a run and woke its parked
// coordinator, which the runtime readied onto this processor (runnext): it
// runs once this goroutine blocks or yields (an idle processor steals it only
// after microseconds), so this goroutine, about to wait, yields.
func (p *Policy) Ended() { runtime.Gosched() }

// Late reports whether a caller-runs loop starts late: no waiter may spin.
// There a woken worker may wait for a CPU longer than the loop lasts, and
// one preempted in the last chunk holds the loop up; so the caller claims
// alone until LateWake or gang's timer (LateBound) wakes the workers, and
// copies that wait for each other always meet. go run ./perf -scenario
// contended measures it. A crowded view is refreshed first if stale, since
// nobody else might (waiters park). A view never read comes from the
// processors alone: a program's first loop does not wait for the load's
// first reading, which opens files.
func Late() bool {
	if view.word.Load() == 0 {
		return Procs() < 2
	}
	return !maySpin()
}

// LateWake is asked after each chunk a late loop's caller claims, spent since
// the start, claimed of n. It reports whether the caller decides now (after
// LateAfter), and if so whether to wake the workers: at the rate so far, at
// least LateLeft is left (spent*(n-claimed) >= LateLeft*claimed, in 128 bits).
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

// Backoff is the wait for an event nobody wakes the waiter for at once (the
// Terminator's master), in HotSpot's three stages: rounds of 2^k polls, yields
// until Default has passed, naps doubling up to MaxNap. Where waiters may not
// spin (Allow) it only yields, for Oversubscribed.
type Backoff struct {
	round       int
	budget, nap time.Duration
	start       time.Time
}

// NewBackoff starts a wait.
func NewBackoff() Backoff {
	b := Backoff{budget: Default, nap: 10 * time.Microsecond, start: time.Now()}
	if Allow(Default) == 0 {
		b.round, b.budget = spinRounds, Oversubscribed
	}
	return b
}

// Next waits one step, polling done while it spins, and returns 0; past the
// yields it returns how long to nap (the caller naps, so it can be woken).
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
