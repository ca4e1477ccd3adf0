// Package spin is workgang's one wait policy: every goroutine of the module
// that waits for another one (the dispatcher's idle workers and coordinator in
// package gang, the semaphore's waiters, a team's barrier, the work-stealing
// Terminator) asks it how long to spin before it parks, and spins with Until.
//
// The policy decides timing only. Any budget, from 0 to an hour, gives the
// same results: which copies run, on which goroutines they may run, and what
// a run reports never depend on it. The processor count it keeps (Procs) is
// the program's setting (GOMAXPROCS, at most the CPUs the process may use);
// loops read it to choose how many copies are worth offering, never whether
// their iterations run.
//
// Each rule that rests on how the Go scheduler or the machine behaves is a
// hint with a name (Hint) that the environment variable WORKGANG_WAIT can
// switch off:
//
//	WORKGANG_WAIT=plain          every hint off: spin for the budget, then park
//	WORKGANG_WAIT=-load,-yield   the named hints off, the others on
//
// The variable is read once, when the program starts. gang/README.md has the
// gate that keeps each hint: what it pays, on which scenario, and its cost on
// the others (go run ./perf/gate).
//
// Cost at scale, on paper. A waiter that parks costs nothing; one that spins
// costs the CPU time of its spin, which the policy bounds: Default per wait
// (up to maxLearned for a worker that Learn stretched), none for a worker
// after two runs that did not need it, none while other processes' threads
// wait for the CPUs (Load). The policy's shared state is one read-mostly word
// (the view), refreshed by one waiter at a time at most every refreshEvery:
// one cache-line transfer per core per refresh, whatever the core count.
//
// The package imports only the standard library.
package spin

import (
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
)

// Default is the spin budget of a waiter whose budget was never set. It is a
// few times the cost of parking and waking a goroutine on a typical Linux
// VM, so a waiter spins about as long as a park would cost it (the "no worse
// than twice optimal" rule of spin-then-block).
const Default = 50 * time.Microsecond

// Oversubscribed is how long the work-stealing Terminator yields, in all,
// when it does not spin: about what parking and waking costs.
const Oversubscribed = 3 * time.Microsecond

// A Hint is one scheduling heuristic of the policy. Each can be switched off
// (WORKGANG_WAIT); results are the same with any combination.
type Hint uint32

const (
	// Load: no spinning while other processes' threads wait for the
	// machine's CPUs (load_linux.go). For: shared machines, CI runners.
	Load Hint = 1 << iota
	// Yield: the coordinator of a plain run whose goroutines outnumber the
	// processors yields once if a copy is still unclaimed after a short
	// poll, and the copy that ends such a run yields back (Policy.End).
	// For: plain runs at n = GOMAXPROCS.
	Yield
	// Learn: an idle worker woken soon after it parked doubles its budget
	// (up to 2^maxBoost times, never past maxLearned); one that slept long
	// halves it. For: phases separated by gaps a little longer than the
	// budget.
	Learn

	allHints = Load | Yield | Learn
)

var hintNames = []struct {
	h    Hint
	name string
}{{Load, "load"}, {Yield, "yield"}, {Learn, "learn"}}

// hints is the set of hints in force: written at init (and by tests and the
// gate, between runs), read with one atomic load per question.
var hints atomic.Uint32

func init() { hints.Store(uint32(ParseHints(os.Getenv("WORKGANG_WAIT")))) }

// ParseHints returns the hints a WORKGANG_WAIT value leaves on: "" or "all",
// every hint; "plain", none; a comma list of "-name" (or "name" after
// "plain"), every hint but those (or only those). Unknown names are ignored,
// so an old variable never stops a program.
func ParseHints(v string) Hint {
	h := allHints
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		switch f {
		case "plain":
			h = 0
		case "all":
			h = allHints
		}
		for _, n := range hintNames {
			switch f {
			case "-" + n.name:
				h &^= n.h
			case n.name:
				h |= n.h
			}
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

// String names the hints in h, as WORKGANG_WAIT would.
func (h Hint) String() string {
	switch h & allHints {
	case allHints:
		return "all"
	case 0:
		return "plain"
	}
	var on []string
	for _, n := range hintNames {
		if h&n.h != 0 {
			on = append(on, n.name)
		}
	}
	return "plain," + strings.Join(on, ",")
}

// The view: the processors the program may use and whether other processes'
// threads wait for the machine's CPUs, in one word, so a reader gets a
// consistent pair with one load. Refreshed by whichever goroutine first finds
// it older than refreshEvery (the CAS on refreshing picks one); reading
// GOMAXPROCS takes the scheduler's lock and the load costs system calls, so
// neither belongs on a path that does not wait.
var view struct {
	_ [pad.CacheLine]byte
	viewLine
	_          [uintptr(pad.CacheLine) - unsafe.Sizeof(viewLine{})]byte
	refreshing atomic.Bool // written by refreshers only: a line of its own
	_          [pad.CacheLine]byte
}

type viewLine struct {
	word atomic.Uint64 // procs<<1 | contended; 0 before the first refresh
	next atomic.Int64  // when the view is stale, in ns since start
	// asked counts Refresh calls; read is the count a refresher loaded
	// before it read the machine. The view is fresh for Procs while they
	// agree: a refresher that read GOMAXPROCS before a Refresh leaves read
	// behind asked, so the next reader reads again.
	asked, read atomic.Uint64
	forced      atomic.Bool // ForceView: no refresh until its restore
}

// refreshEvery bounds how stale the view may be.
const refreshEvery = 2 * time.Millisecond

var start = time.Now()

// Procs returns the processors the program may use: GOMAXPROCS, but no more
// than the CPUs of the process's affinity mask when it started
// (runtime.NumCPU: the process's, not the calling thread's, so a thread
// pinned later changes nothing). Two loads of one line, no clock: it follows
// a Refresh at once, and GOMAXPROCS within a few refreshes of the waiters
// (Until refreshes the view); Fresh refreshes it first if it is stale.
func Procs() int {
	if w := view.word.Load(); w != 0 && (view.read.Load() == view.asked.Load() || view.forced.Load()) {
		return int(w >> 1)
	}
	return Fresh()
}

// Fresh is Procs, refreshed first if stale: for a caller about to act on a
// count that Procs made smaller than it would otherwise be. After a Refresh
// it returns a reading made after it (see viewLine.asked).
func Fresh() int {
	w := current(false)
	for view.read.Load() != view.asked.Load() && !view.forced.Load() {
		runtime.Gosched() // another goroutine is refreshing: let it finish
		w = current(false)
	}
	return int(w >> 1)
}

// current returns the view word, refreshed first if it is stale. A waiter
// (machine) reads the machine too; anyone else re-reads GOMAXPROCS only and
// keeps the load reading for the next waiter: a loop's start must not pay
// the load's system calls (nor, the first time, the runtime's metrics set-up).
func current(machine bool) uint64 {
	if view.forced.Load() {
		return view.word.Load()
	}
	now := int64(time.Since(start))
	stale := now >= view.next.Load() || view.read.Load() != view.asked.Load()
	if stale && !view.refreshing.Load() && view.refreshing.CompareAndSwap(false, true) {
		asked := view.asked.Load() // before the readings (see viewLine)
		procs := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
		contended := view.word.Load()&1 != 0
		if machine {
			contended = On(Load) && othersWaiting(procs)
			view.next.Store(now + int64(refreshEvery))
		}
		view.word.Store(viewWord(procs, contended))
		view.read.Store(asked)
		view.refreshing.Store(false)
	}
	return view.word.Load()
}

func viewWord(procs int, contended bool) uint64 {
	w := uint64(procs) << 1
	if contended {
		w |= 1
	}
	return w
}

// ForceView fixes the view at procs processors and contended until restore
// is called (which reads the machine again): for tests of what the view
// decides, which must not depend on the machine they run on.
func ForceView(procs int, contended bool) (restore func()) {
	view.forced.Store(true)
	view.word.Store(viewWord(procs, contended))
	return func() { view.forced.Store(false); Refresh() }
}

// Refresh makes the next reader of the view read it afresh (a caller that
// just changed GOMAXPROCS).
func Refresh() { view.asked.Add(1) }

// Budget returns how long a waiter whose budget was never set should spin:
// Allow(Default).
func Budget() time.Duration { return Allow(Default) }

// Allow returns budget as the policy allows it: 0 with one processor (the
// awaited goroutine cannot run while the waiter spins) or while other
// processes wait for the CPUs (Load); else unchanged. It reads the view as
// it is; a waiter that will not spin refreshes it first, since nothing else
// may (one that spins refreshes it in Until).
func Allow(budget time.Duration) time.Duration {
	if budget <= 0 {
		return 0
	}
	w := view.word.Load()
	if allowed(budget, w) == 0 {
		w = current(true)
	}
	return allowed(budget, w)
}

func allowed(budget time.Duration, w uint64) time.Duration {
	if w>>1 <= 1 || w&1 != 0 && On(Load) {
		return 0
	}
	return budget
}

// maxBurst is how many polls a spinner makes between two yields: a poll is a
// load of a cached line, so a burst lasts one to two microseconds, short
// enough that a goroutine queued behind a spinner is not held up for long,
// long enough that the yield and the clock read cost little of the spin.
const maxBurst = 1024

// Until polls done until it returns true or about budget has passed, yielding
// the processor between bursts so that other goroutines (possibly the one
// being waited for) run on it even with GOMAXPROCS = 1 or more spinners than
// processors. It reports whether done returned true. budget <= 0 polls once.
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
		current(true) // a stale view is refreshed here, while waiting (Allow)
		runtime.Gosched()
		if done() {
			return true
		}
		if time.Since(t0) >= budget {
			return false
		}
	}
}
