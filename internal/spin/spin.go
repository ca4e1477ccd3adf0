// Package spin is workgang's one wait policy: every goroutine of the module
// that waits for another one (the dispatcher's idle workers and coordinator in
// package gang, the semaphore's waiters, a team's barrier, the work-stealing
// Terminator) asks it how long to spin before it parks, and spins with Until.
//
// The protocol never depends on this package: any budget, from 0 to an hour,
// gives the same results; only the time and CPU they take differ. What is
// here is therefore all tuning, and each piece of it that rests on how the
// Go scheduler or the machine behaves is a hint with a name (Hint) that the
// environment variable WORKGANG_WAIT can switch off:
//
//	WORKGANG_WAIT=plain          every hint off: spin for the budget, then park
//	WORKGANG_WAIT=-load,-yield   the named hints off, the others on
//
// The variable is read once, when the program starts. Without it every hint
// is on. The hints and the scenario each exists for are listed at Hint;
// gang/README.md has the measurements that keep each one (the "gate").
//
// Cost at scale, on paper. A waiter that parks costs nothing; one that spins
// costs the CPU time of its spin, which the policy bounds: Default per wait
// (up to 1 ms for a worker that Learn stretched), none for a worker after two runs that
// did not need it, none while the machine's run queues are longer than its
// CPUs (Load). The policy's own
// shared state is one read-mostly word (the processor view), refreshed by one
// goroutine at a time at most every refreshEvery: at 16-256 cores it is one
// cache-line transfer per core per refresh, and the refresh itself (a read of
// /proc/loadavg, of the affinity mask and of the runtime's counts of running
// and runnable goroutines, a few microseconds) is paid by one waiter per refreshEvery,
// whatever the core count. Nothing here is touched
// on a path that does not spin, except Lure's (Decoy): a non-blocking send
// after a batch of wake-ups, paid only by a waker that just signalled a
// semaphore, and a switch to the set's one decoy goroutine when the waker's
// processor next blocks; at any core count one per waker, not per worker.
//
// The package imports only the standard library (and golang.org/x/sys on
// Linux, for the affinity mask).
package spin

import (
	"math"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
)

// Default is the spin budget of a waiter whose budget was never set, when the
// goroutines involved fit in the processors. It is a few times the cost of
// parking and waking a goroutine on a typical Linux VM, so a waiter spins
// about as long as a park would cost it (the "no worse than twice optimal"
// rule of spin-then-block).
const Default = 50 * time.Microsecond

// Oversubscribed is how long the work-stealing Terminator yields, in all,
// when it does not spin: about what parking and waking costs.
const Oversubscribed = 3 * time.Microsecond

// A Hint is one scheduling heuristic of the policy. Each can be switched off
// (WORKGANG_WAIT); the protocol is correct with any combination.
type Hint uint32

const (
	// Load: no spinning while other processes' threads wait for a CPU
	// (the machine's run queues hold more threads than it has CPUs), and a
	// loop then runs on its caller alone (ForLoop); the processors count is
	// cut to the CPUs the affinity mask allows; and, for loops on shared
	// sets, this process's own goroutines waiting for processors (ForLoop's
	// queued). For: shared machines, CI runners, containers, servers.
	Load Hint = 1 << iota
	// Yield: the coordinator of a plain run whose workers and itself
	// outnumber the processors yields after a short poll, and the copy
	// that finishes such a run yields back. For: plain RunN at
	// n = GOMAXPROCS (the grain sweep).
	Yield
	// Learn: an idle worker woken soon after it parked (within 4 budgets)
	// doubles its full budget, up to 16 times the set's and never past
	// 1 ms; one that slept 32 budgets or more halves it again. For: phases
	// separated by gaps a little longer than the budget (a collector's
	// pauses between mutator slices; `pause`, `mixed`).
	Learn
	// Lure: right after waking workers, a waker that runs on readies the
	// dispatcher's decoy (Decoy), so the worker woken last waits in the
	// run queue, where an idle processor takes it at once, rather than in
	// the waker's runnext slot. For: caller-runs runs in a process whose
	// other goroutines let the workers park between runs (`forkjoin-gap`).
	Lure

	allHints = Load | Yield | Learn | Lure
)

var hintNames = []struct {
	h    Hint
	name string
}{{Load, "load"}, {Yield, "yield"}, {Learn, "learn"}, {Lure, "lure"}}

// hints is the set of hints in force: written at init (and by tests, between
// runs), read with one atomic load per question.
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
		switch {
		case f == "plain":
			h = 0
		case f == "all":
			h = allHints
		default:
			off := strings.HasPrefix(f, "-")
			for _, n := range hintNames {
				if strings.TrimPrefix(f, "-") == n.name {
					if off {
						h &^= n.h
					} else {
						h |= n.h
					}
				}
			}
		}
	}
	return h
}

// On reports whether hint h is in force.
func On(h Hint) bool { return Hint(hints.Load())&h != 0 }

// SetHints sets the hints in force and returns the previous set: for tests
// and the perf harness, which compare a hint on and off in one process. It
// may be called at any time; a wait already under way keeps what it read.
func SetHints(h Hint) (old Hint) {
	old = Hint(hints.Swap(uint32(h & allHints)))
	Refresh()
	return old
}

// String names the hints in h, as WORKGANG_WAIT would.
func (h Hint) String() string {
	if h&allHints == allHints {
		return "all"
	}
	if h&allHints == 0 {
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

// The processor view: how many processors the waiters may count on, and
// whether other threads are waiting for the machine's CPUs. One word, so a
// reader gets a consistent pair with one load; refreshed by whichever waiter
// first finds it older than refreshEvery (the CAS on refreshing picks one).
// Reading GOMAXPROCS takes the scheduler's global lock, and the load and the
// affinity mask cost system calls: none of it belongs on a path that does not
// spin, and none of it more often than this.
var view struct {
	_ [pad.CacheLine]byte
	viewLine
	_          [uintptr(pad.CacheLine) - unsafe.Sizeof(viewLine{})]byte
	refreshing atomic.Bool // written by refreshers only: a line of its own
	_          [pad.CacheLine]byte
}

// viewLine is what every Procs reads: the view and when it goes stale.
type viewLine struct {
	word atomic.Uint64 // procs<<2 | queued<<1 | contended
	next atomic.Int64  // when the view is stale, in ns since start
	// loadNext is when the load readings in word go stale (see loopSlack);
	// written by refreshers and Refresh, read by refreshers only.
	loadNext atomic.Int64
}

// refreshEvery bounds how stale the view may be: a machine that becomes
// busy (or free) is seen within this long.
const refreshEvery = 2 * time.Millisecond

var start = time.Now()

// Procs returns the number of processors the waiters may count on
// (GOMAXPROCS, or fewer where the affinity mask allows fewer CPUs and hint
// Load is on) and whether the machine is contended (hint Load: more threads
// want its CPUs than it has). Both may be up to refreshEvery old.
func Procs() (procs int, contended bool) {
	w := current(false)
	return int(w >> 2), w&1 != 0
}

// procsSeen is Procs's processors without a refresh (but the first): for
// the paths that must not pay one (a waker's lure, the start of an end wait).
func procsSeen() int {
	if w := view.word.Load(); w != 0 {
		return int(w >> 2)
	}
	return int(current(false) >> 2)
}

// ForLoop is the view a loop reads once as it starts: the processors (as
// Procs), whether the machine is crowded (hint Load: contended, or one
// processor; the loop then runs on its caller alone, since a worker woken for
// it would wait for a CPU and the caller for that worker), and whether this
// process's own goroutines wait for processors (hint Load: the runtime's
// runnable count, averaged over two readings, at least the processors; a
// worker woken now would wait behind them). One clock read, one load: the
// loop's caller reads the machine only once loopSlack past stale.
func ForLoop() (procs int, crowded, queued bool) {
	w := current(true)
	procs = int(w >> 2)
	if !On(Load) {
		return procs, false, false
	}
	return procs, w&1 != 0 || procs <= 1, w&2 != 0
}

// loopSlack is how much staler than refreshEvery a loop's caller lets the
// load readings get before it reads the machine again; within it, a loop
// that finds the view stale re-reads only GOMAXPROCS. The readings (a few
// microseconds of system calls, BenchmarkRefresh) at a loop's start are on
// its critical path, where a process mixing other fork-joins with short
// loops paid them at every other batch (perf/openmp's mixed-process mode).
// Waiters, which read the machine as they start to wait, keep the readings
// fresher while the set's workers are in use.
const loopSlack = 3 * refreshEvery

// current returns the view word, refreshed first if it is stale; a loop's
// caller (loop) reads the machine only if the readings are loopSlack past
// stale (see refresh).
func current(loop bool) uint64 {
	now := int64(time.Since(start))
	if next := view.next.Load(); now >= next && !view.refreshing.Load() && view.refreshing.CompareAndSwap(false, true) {
		refresh(now, next, loop)
		view.refreshing.Store(false)
	}
	return view.word.Load()
}

// ForceView fixes the processor view at procs processors and contended until
// restore is called (which reads the machine again): for tests of what the
// view decides, which must not depend on the machine they run on.
func ForceView(procs int, contended bool) (restore func()) {
	return ForceQueued(procs, contended, false)
}

// ForceQueued is ForceView with ForLoop's queued answer fixed too.
func ForceQueued(procs int, contended, queued bool) (restore func()) {
	view.word.Store(viewWord(procs, contended, queued))
	view.next.Store(math.MaxInt64) // no refresh until restore
	return Refresh
}

// Refresh makes the next Procs read the processors afresh, for a caller that
// just changed GOMAXPROCS (tests).
func Refresh() {
	view.loadNext.Store(0)
	view.next.Store(0)
}

// refresh reads the processor view; its store of word publishes it to every
// later Procs (atomics are sequentially consistent). next is the deadline the
// refresher saw: the CAS below leaves a Refresh made meanwhile (next = 0) in
// place, so the change that asked for it is read by the next Procs. With
// hint Load it reads the machine (the affinity mask, the load) unless a
// loop's caller refreshes within loopSlack of the last reading: then it
// re-reads GOMAXPROCS only and keeps the readings (the CPUs the mask allows,
// readings.allowed, and the word's contended and queued bits).
func refresh(now, next int64, loop bool) {
	procs := runtime.GOMAXPROCS(0)
	if !On(Load) {
		view.word.Store(viewWord(procs, false, false))
		view.next.CompareAndSwap(next, now+int64(refreshEvery))
		return
	}
	old := view.word.Load()
	contended, queued := old&1 != 0, old&2 != 0
	read := !loop || now >= view.loadNext.Load()+int64(loopSlack)
	if read {
		readings.allowed = allowedCPUs()
	}
	if readings.allowed > 0 {
		procs = min(procs, readings.allowed)
	}
	if read {
		contended, queued = othersWaiting(procs), goroutinesQueued(procs)
		view.loadNext.Store(now + int64(refreshEvery))
	}
	view.word.Store(viewWord(procs, contended, queued))
	view.next.CompareAndSwap(next, now+int64(refreshEvery))
}

// readings is what refresh keeps of the machine between its readings: the
// CPUs the affinity mask allowed (0: unknown). Only refreshers touch it; the
// CAS on view.refreshing, and its release by a Store, order them.
var readings struct{ allowed int }

// viewWord packs a processor view into one word.
func viewWord(procs int, contended, queued bool) uint64 {
	w := uint64(procs) << 2
	if queued {
		w |= 2
	}
	if contended {
		w |= 1
	}
	return w
}

// Budget returns how long a waiter whose budget was never set should spin:
// Allow(Default).
func Budget() time.Duration { return Allow(Default) }

// Allow returns budget (an explicit one, such as a set's WithSpin, or
// Default) as the policy allows it: 0 with one processor (the awaited
// goroutine cannot run while the waiter spins) or on a contended machine
// (Load); else unchanged. It reads the view as it is: a waiter that spins
// refreshes a stale view during its spin (Until), in time it would spend
// polling anyway, rather than on its way to the wait; one that will not
// spin refreshes it first, since nothing else may.
func Allow(budget time.Duration) time.Duration {
	if budget <= 0 {
		return 0
	}
	w := view.word.Load()
	if allowed(budget, w) == 0 {
		w = current(false)
	}
	return allowed(budget, w)
}

// allowed is Allow's rule for view word w.
func allowed(budget time.Duration, w uint64) time.Duration {
	if procs, contended := int(w>>2), w&1 != 0; procs <= 1 || contended && On(Load) {
		return 0
	}
	return budget
}

// Idle returns the budget of an idle worker with spin state sp: an eighth of
// budget after one run that did not need it, 0 after two or more (a surplus
// worker parks and costs nothing: this guards sets much larger than their
// runs, which a 2-CPU machine cannot measure); else budget, stretched by what
// Learn recorded (hint Learn). The policy's cap (Allow) applies on top.
func Idle(budget time.Duration, sp *Spinner) time.Duration {
	switch {
	case sp.Misses == 1:
		return Allow(budget / 8)
	case sp.Misses > 1:
		return 0
	}
	if On(Learn) {
		budget <<= sp.boost
	}
	return Allow(budget)
}

// EndPolls is how many times the coordinator of a plain run polls for the end
// before it yields (hint Yield), when the run's workers and the coordinator
// outnumber the processors, or -1 when it should not yield. About as long as
// a worker takes to run two empty copies, so that the empty-task round trip
// stays a spin.
func EndPolls(goroutines int) int {
	if !On(Yield) {
		return -1
	}
	if goroutines > procsSeen() {
		return 64
	}
	return -1
}

// maxBurst is how many polls a spinner makes between two yields: a poll is a
// load of a cached line, so a burst lasts one to two microseconds, short
// enough that a goroutine queued behind a spinner is not held up for long,
// long enough that the yield and the clock read cost little of the spin.
const maxBurst = 1024

// Spinner is one waiter's spin state: how many runs in a row did not need it
// (Misses, kept by its owner) and what Learn recorded. The zero value is
// ready. A Spinner belongs to one goroutine at a time (hand-overs need a
// happens-before edge).
type Spinner struct {
	Misses int16 // consecutive runs that did not need the waiter (Idle)
	boost  int16 // how many times Learn doubled the full budget
}

// Learn bounds: 2^maxBoost times the set's budget, never past maxLearned.
const (
	maxBoost   = 4
	maxLearned = time.Millisecond
)

// Learn records how long an idle worker that spun for budget and then parked
// slept before a run woke it (hint Learn): shortly, and its full budget
// doubles; long, and it halves.
func (sp *Spinner) Learn(slept, budget time.Duration) {
	if !On(Learn) || budget <= 0 {
		return
	}
	switch {
	case slept < 4*budget && sp.boost < maxBoost && 2*budget <= maxLearned:
		sp.boost++
	case slept >= 32*budget && sp.boost > 0:
		sp.boost--
	}
}

// Until polls done until it returns true or about budget has passed, yielding
// the processor between bursts so that other goroutines (possibly the one
// being waited for) run on it even with GOMAXPROCS = 1 or more spinners than
// processors (a spin loop without yields stalls such a machine). It reports
// whether done returned true. budget <= 0 polls once.
func Until(budget time.Duration, done func() bool) bool {
	if done() {
		return true
	}
	if budget <= 0 {
		return false
	}
	start := time.Now()
	for {
		for range maxBurst {
			if done() {
				return true
			}
		}
		current(false) // a stale view is refreshed here, while waiting (Allow)
		runtime.Gosched()
		if done() {
			return true
		}
		if time.Since(start) >= budget {
			return false
		}
	}
}
