// Package spin is workgang's one wait policy: every decision of the module on
// how long a goroutine waits is made here (gang/README.md lists them, one row
// each): the dispatcher's workers and coordinator (Policy), a semaphore's
// waiters and a team's barrier (Budget, Until), the work-stealing
// Terminator's master (Backoff), and when a late loop's workers wake (Late,
// LateWake, LateBound).
//
// Its principle: a waiter spins only while a processor would otherwise idle.
// The policy decides when goroutines run, never whether: any budget and any
// view of the machine give the same copies and the same results. Package
// workers reads the view in one place, through Late, to start a loop late;
// its workers are then woken within LateBound.
//
// The one reading beyond GOMAXPROCS, whether other processes' threads wait
// for the CPUs (internal/load), is a hint (Load) that the environment
// variable WORKGANG_WAIT, read at start, switches off: "plain" or "-load".
//
// Cost at scale: a parked waiter costs nothing; a spinner at most its budget.
// The shared state is one read-mostly word (the view), refreshed by one
// waiter at most every refreshEvery.
package spin

import (
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/internal/load"
	"github.com/workgang/workgang/internal/pad"
)

// Default is the spin budget of a waiter whose budget was never set
// (a semaphore, a team's barrier, the work-stealing Terminator): a few times
// what parking and waking a goroutine costs (spin-then-block).
const Default = 50 * time.Microsecond

// Idle is a set's budget (its idle workers between runs and its coordinator
// at a run's end) unless WithSpin sets one: long enough that the workers of
// a collector's pause or a solver's steps, whose phases come every 100 us to
// 1 ms, are still spinning when the next phase starts; short enough that an
// idle program stops spinning within a millisecond. What it costs an idle
// process: docs/perf.md ("Idle CPU"); what it buys: go run ./perf/compare.
const Idle = time.Millisecond

// Oversubscribed is how long the work-stealing Terminator yields, in all,
// when it may not spin: about what parking and waking costs.
const Oversubscribed = 3 * time.Microsecond

// A Hint is a scheduling heuristic that rests on a reading of the machine;
// results are the same with it on or off. Load: no spinning while other
// processes' threads wait for the machine's CPUs (shared machines, CI).
type Hint uint32

const (
	Load     Hint = 1
	allHints      = Load
)

var hints atomic.Uint32 // in force: set at init, by tests and the gate

func init() { hints.Store(uint32(ParseHints(os.Getenv("WORKGANG_WAIT")))) }

// ParseHints returns the hints a WORKGANG_WAIT value leaves on: "" or "all",
// every hint; "plain" or "-load", none; "plain,load", load. Other names (an
// older release's hints among them) are ignored, so an old setting never
// stops a program.
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

// The view: the processors the program may use and whether other processes'
// threads wait for the CPUs, in one word (one load reads a consistent pair).
// Reading the load costs system calls, so only waiters refresh a stale view
// (older than refreshEvery): a spinner between bursts (Until), a waiter that
// may not spin (Allow), a loop starting on a crowded view (Crowded). A stale
// view costs timing only.
var view struct {
	_    pad.Line
	word atomic.Uint64 // procs<<1 | contended; 0 before the first reading
	next atomic.Int64  // when the view goes stale (ns since start)
	_    pad.Line
	// mu orders refreshes, Refresh and ForceView; forced is read under it.
	mu     sync.Mutex
	forced bool
}

// refreshEvery bounds how stale the view may be while goroutines wait.
const refreshEvery = 2 * time.Millisecond

var start = time.Now()

// Procs returns the processors the policy counts on, as of the view's last
// refresh: GOMAXPROCS, at most runtime.NumCPU (the process's mask at start,
// not the calling thread's).
func Procs() int {
	w := view.word.Load()
	if w == 0 {
		Refresh() // first use
		w = view.word.Load()
	}
	return int(w >> 1)
}

func procsNow() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// current returns the view word, refreshed first if it is stale and no other
// waiter is refreshing it.
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

// ForceView fixes the view at procs processors and contended until restore
// is called: for tests of what the view decides.
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
// CPUs (Load); a waiter that may not spin refreshes a stale view first.
func Allow(budget time.Duration) time.Duration {
	if budget <= 0 {
		return 0
	}
	if allowed(view.word.Load()) || allowed(current()) {
		return budget
	}
	return 0
}

// Crowded reports whether a woken goroutine may wait for a CPU: one
// processor, or other processes' threads waiting for the CPUs (Load); it is
// when waiters may not spin. A view that says free costs one load (spinning
// waiters refresh it); one that says crowded is refreshed first if stale,
// since nobody else might (waiters park at once, and a loop that reads it
// leaves the workers parked), and a view that stayed crowded after the
// machine freed would keep every loop on its caller. A view never read is
// set from the processors alone (Procs): the load's first reading opens
// files, which a program's first loop should not wait for; the first waiter
// reads it.
func Crowded() bool {
	w := view.word.Load()
	if w == 0 {
		return Procs() < 2
	}
	return !allowed(w) && !allowed(current())
}

func allowed(w uint64) bool { return w>>1 > 1 && (w&1 == 0 || !On(Load)) }

// maxBurst is how many polls a spinner makes between two yields: a burst
// lasts a microsecond or two, short enough not to hold up a goroutine queued
// behind it, long enough that the yield and the clock read cost little.
const maxBurst = 1024

// Until polls done until it returns true or about budget has passed,
// yielding between bursts so that other goroutines (the awaited one among
// them) run even with more spinners than processors, and reports whether done
// returned true; budget <= 0 polls once. Between bursts it refreshes a stale
// view, and stops early once the view says waiters may not spin, so the
// load reading holds at any budget.
func Until(budget time.Duration, done func() bool) bool {
	return until(budget, done, true)
}

// until is Until; refresh false leaves the view alone (the coordinator's end
// wait: a refresh's system calls belong off the run's critical path).
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
