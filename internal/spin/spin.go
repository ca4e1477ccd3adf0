// Package spin is workgang's one wait policy: every goroutine of the module
// that waits for another one (the dispatcher's idle workers and coordinator in
// package gang, the semaphore's waiters, a team's barrier, the work-stealing
// Terminator) asks it how long to spin before it parks, and spins with Until.
//
// The policy decides timing only. Any budget, from 0 to an hour, gives the
// same results: which copies run, on which goroutines they may run, and what
// a run reports never depend on it, nor on the view of the machine it keeps
// (Procs and the load), which nothing outside the package reads to decide
// what a run does.
//
// Its rule: a waiter spins only while a processor would otherwise idle
// (Policy). The one reading of the machine beyond GOMAXPROCS, whether other
// processes' threads wait for the CPUs (internal/load), is a hint (Hint
// Load) that the environment variable WORKGANG_WAIT, read once at start,
// switches off: "plain" or "-load". gang/README.md has the table of the rule
// and the gate that keeps the hint (go run ./perf/gate).
//
// Cost at scale, on paper: a waiter that parks costs nothing; one that spins
// costs its spin, which the policy bounds (Default per wait, none for a
// worker whose id is Procs() or more, none for a worker after two runs that
// did not need it, none on a loaded machine). The shared state is one
// read-mostly word (the view), refreshed by one waiter at most every
// refreshEvery: a cache-line transfer per core per refresh at any core count.
//
// The package imports the standard library and the module's internal
// padding unit and load reading (internal/load).
package spin

import (
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/workgang/workgang/internal/load"
	"github.com/workgang/workgang/internal/pad"
)

// Default is the spin budget of a waiter whose budget was never set: a few
// times the cost of parking and waking a goroutine on a Linux VM, so a waiter
// spins about as long as a park would cost it (spin-then-block's "no worse
// than twice optimal").
const Default = 50 * time.Microsecond

// Oversubscribed is how long the work-stealing Terminator yields, in all,
// when it does not spin: about what parking and waking costs.
const Oversubscribed = 3 * time.Microsecond

// A Hint is one scheduling heuristic of the policy; results are the same
// with any combination on.
type Hint uint32

// Load: no spinning while other processes' threads wait for the machine's
// CPUs (internal/load). For: shared machines, CI runners.
const Load Hint = 1

const allHints = Load

// hints is the set in force: written at init (tests and the gate: between
// runs), read with one atomic load per question.
var hints atomic.Uint32

func init() { hints.Store(uint32(ParseHints(os.Getenv("WORKGANG_WAIT")))) }

// ParseHints returns the hints a WORKGANG_WAIT value leaves on: "" or "all",
// every hint; "plain", none; a comma list of "-name" (or "name" after
// "plain"), every hint but those (or only those). Unknown names (among them
// those of hints an older release had) are ignored, so an old variable never
// stops a program.
func ParseHints(v string) Hint {
	h := allHints
	for _, f := range strings.Split(strings.ToLower(v), ",") {
		switch f = strings.TrimSpace(f); f {
		case "plain":
			h = 0
		case "all", "load":
			h = allHints
		case "-load":
			h = 0
		}
	}
	return h
}

// On reports whether hint h is in force.
func On(h Hint) bool { return Hint(hints.Load())&h != 0 }

// SetHints sets the hints in force and returns the previous set (tests, the
// gate). A wait already under way keeps what it read.
func SetHints(h Hint) (old Hint) {
	old = Hint(hints.Swap(uint32(h & allHints)))
	Refresh()
	return old
}

// The view: the processors the program may use and whether other processes'
// threads wait for the CPUs, one word, so a reader gets a consistent pair with
// one load. Reading the load costs system calls, which belong only on a path
// that waits, and only on a wait that lasts: waiters refresh the view at most
// every refreshEvery, a spinner once its spin lasted refreshAfter or failed
// (Until), a waiter that will not spin before it parks (Allow). A stale view
// costs only timing: nothing outside this package decides what a run does by
// it.
var view struct {
	_ [pad.CacheLine]byte
	viewLine
	_          [uintptr(pad.CacheLine) - unsafe.Sizeof(viewLine{})]byte
	refreshing atomic.Bool // the CAS picks one refresher; a line of its own
	_          [pad.CacheLine]byte
}

type viewLine struct {
	word   atomic.Uint64 // procs<<1 | contended; 0 before the first reading
	next   atomic.Int64  // when the view is stale (ns since start)
	forced atomic.Bool   // ForceView: no refresh until its restore
}

// refreshEvery bounds how stale the view may be while goroutines wait.
const refreshEvery = 2 * time.Millisecond

var start = time.Now()

// Procs returns the processors the wait policy counts on: GOMAXPROCS, at
// most the CPUs of the process's affinity mask at start (runtime.NumCPU: the
// process's, not the calling thread's, so a thread pinned later changes
// nothing), as of the view's last refresh. One load.
func Procs() int {
	if w := view.word.Load(); w != 0 {
		return int(w >> 1)
	}
	Refresh() // first use
	return int(view.word.Load() >> 1)
}

// procsNow reads the processors the policy counts on.
func procsNow() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// current returns the view word, refreshed first (processors and load) if
// it is stale: called by waiters only.
func current() uint64 {
	if view.forced.Load() {
		return view.word.Load()
	}
	now := int64(time.Since(start))
	if now >= view.next.Load() && !view.refreshing.Load() && view.refreshing.CompareAndSwap(false, true) {
		// forced is read again under the CAS, which ForceView takes too: a
		// refresh that began before a ForceView cannot overwrite its word.
		if !view.forced.Load() {
			procs := procsNow()
			contended := On(Load) && load.OthersWaiting(procs)
			view.next.Store(now + int64(refreshEvery))
			view.word.Store(viewWord(procs, contended))
		}
		view.refreshing.Store(false) // orders this refresh before the next one's CAS
	}
	return view.word.Load()
}

// Refresh reads the processors again now and drops the load reading (not
// contended until the next waiter reads it: SetHints; tests that change
// GOMAXPROCS). It waits for a refresh in
// flight, which may have read GOMAXPROCS before the caller changed it: the
// CAS orders that refresh's stores before this one's, so the view ends
// with a reading made after the call began.
func Refresh() {
	lockView()
	if !view.forced.Load() {
		view.word.Store(viewWord(procsNow(), false))
		view.next.Store(0) // the next waiter reads the load
	}
	view.refreshing.Store(false)
}

// lockView takes the refreshing CAS, waiting for a refresh in flight; its
// holder releases it with view.refreshing.Store(false).
func lockView() {
	for !view.refreshing.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
}

func viewWord(procs int, contended bool) uint64 {
	if contended {
		return uint64(procs)<<1 | 1
	}
	return uint64(procs) << 1
}

// ForceView fixes the view at procs processors and contended until restore
// is called: for tests of what the view decides, which must not depend on the
// machine they run on.
func ForceView(procs int, contended bool) (restore func()) {
	lockView() // no refresh in flight overwrites the forced word
	view.forced.Store(true)
	view.word.Store(viewWord(procs, contended))
	view.refreshing.Store(false)
	return func() { view.forced.Store(false); Refresh() }
}

// Budget is Allow(Default): how long a waiter whose budget was never set
// spins.
func Budget() time.Duration { return Allow(Default) }

// Allow returns budget as the policy allows it: 0 with one processor (the
// awaited goroutine cannot run while the waiter spins) or while other
// processes wait for the CPUs (Load); else unchanged. A waiter that will
// spin leaves a stale view to its spin (Until); one that will not refreshes
// it first, since nothing else may.
func Allow(budget time.Duration) time.Duration {
	if budget <= 0 {
		return 0
	}
	w := view.word.Load()
	if allowed(budget, w) == 0 {
		w = current()
	}
	return allowed(budget, w)
}

// crowded reports whether view word w says other processes' threads wait for
// the CPUs, with hint Load on.
func crowded(w uint64) bool { return w&1 != 0 && On(Load) }

func allowed(budget time.Duration, w uint64) time.Duration {
	if w>>1 <= 1 || crowded(w) {
		return 0
	}
	return budget
}

// maxBurst is how many polls a spinner makes between two yields: a burst of
// loads of a cached line lasts a microsecond or two, short enough not to
// hold up a goroutine queued behind it, long enough that the yield and the
// clock read cost little of the spin.
const maxBurst = 1024

// Until polls done until it returns true or about budget has passed, yielding
// between bursts so that other goroutines (possibly the awaited one) run even
// with GOMAXPROCS = 1 or more spinners than processors. It reports whether
// done returned true; budget <= 0 polls once. A stale view is refreshed by a
// spin that lasted refreshAfter, or that failed, never by a short one.
func Until(budget time.Duration, done func() bool) bool {
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
		elapsed := time.Since(t0)
		if elapsed >= budget {
			current() // the spin failed: refresh a stale view before the park
			return false
		}
		if elapsed >= refreshAfter {
			current() // a long spin keeps the view fresh (Allow)
		}
		runtime.Gosched()
		if done() {
			return true
		}
	}
}

// refreshAfter is how long a spin lasts before it refreshes a stale view;
// a spin that ends by its budget first refreshes it too. A refresh makes
// system calls that cost several microseconds on a VM after an idle gap
// (BenchmarkRefresh, warm), and it holds its goroutine's processor, on which
// the goroutine the spinner waits for may be queued: the first run after a
// gap wakes its workers onto its caller's processor, and its waits end
// within a few tens of microseconds, before a refresh would (the gate's
// idle-gap scenario). A spin that lasts, as under contention, refreshes. A
// variable only so that a test can make every spin short.
var refreshAfter = 200 * time.Microsecond
