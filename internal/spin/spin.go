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
//	WORKGANG_WAIT=-lure,-yield   the named hints off, the others on
//
// The variable is read once, when the program starts. Without it every hint
// is on. The hints and the scenario each exists for are listed at Hint;
// gang/README.md has the measurements that keep each one (the "gate").
//
// Cost at scale, on paper. A waiter that parks costs nothing; one that spins
// costs the CPU time of its spin, which the policy bounds: Default per wait,
// a few microseconds when waiters outnumber the processors, none while the
// machine's run queues are longer than its CPUs (Load). The policy's own
// shared state is one read-mostly word (the processor view), refreshed by one
// goroutine at a time at most every refreshEvery: at 16-256 cores it is one
// cache-line transfer per core per refresh, and the refresh itself (a read of
// /proc/loadavg and of the affinity mask, a few microseconds) is paid by one
// waiter per refreshEvery, whatever the core count. Nothing here is touched
// on a path that does not spin.
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
)

// Default is the spin budget of a waiter whose budget was never set, when the
// goroutines involved fit in the processors. It is a few times the cost of
// parking and waking a goroutine on a typical Linux VM, so a waiter spins
// about as long as a park would cost it (the "no worse than twice optimal"
// rule of spin-then-block).
const Default = 50 * time.Microsecond

// Oversubscribed is the budget when the spinning goroutines, with the ones
// they wait for, outnumber the processors (hint Oversub): spinners then take
// turns with the goroutines that have real work, so long spins only delay
// them. About what parking and waking costs, so a short wait still ends
// without a park.
const Oversubscribed = 3 * time.Microsecond

// A Hint is one scheduling heuristic of the policy. Each can be switched off
// (WORKGANG_WAIT); the protocol is correct with any combination.
type Hint uint32

const (
	// Demand: an idle worker spins at full budget only while the runs it
	// sees need it; after one run without it an eighth of it, after two
	// none (it parks at once). For: surplus workers of a long-lived set
	// that would otherwise burn the CPUs the copies need.
	Demand Hint = 1 << iota
	// Oversub: budgets shrink to Oversubscribed when spinners and the
	// goroutines they wait for outnumber the processors. For: sets larger
	// than GOMAXPROCS, and plain runs at n = GOMAXPROCS (coordinator + n).
	Oversub
	// Load: no spinning while other processes' threads wait for a CPU
	// (the machine's run queues hold more threads than it has CPUs), and a
	// loop then runs on its caller alone (Crowded); the processors count is
	// cut to the CPUs the affinity mask allows.
	// For: shared machines, CI runners, containers.
	Load
	// Bursts: a spinner shortens its bursts of polls when a yield shows it
	// shares its processor with the goroutine it waits for, and lengthens
	// them again when not. For: hand-offs between goroutines on one P.
	Bursts
	// Yield: the coordinator of a plain run whose workers and itself
	// outnumber the processors yields after a short poll, and the copy
	// that finishes such a run yields back. For: plain RunN at
	// n = GOMAXPROCS (the grain sweep).
	Yield
	// Lure: after waking parked workers, a waker that runs on readies the
	// decoy goroutine, so that the woken worker is not left in the waker's
	// runnext slot (see Decoy). For: caller-runs runs whose workers park
	// between runs (mixed processes).
	Lure
	// Learn: an idle worker woken soon after it parked (within 4 budgets)
	// doubles its full budget, up to 16 times the set's and never past
	// 1 ms; one that slept 32 budgets or more halves it again. For: phases
	// separated by gaps a little longer than the budget (a collector's
	// pauses between mutator slices; `pause`, `mixed`).
	Learn

	allHints = Demand | Oversub | Load | Bursts | Yield | Lure | Learn
)

var hintNames = []struct {
	h    Hint
	name string
}{{Demand, "demand"}, {Oversub, "oversub"}, {Load, "load"}, {Bursts, "bursts"}, {Yield, "yield"}, {Lure, "lure"}, {Learn, "learn"}}

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
	_          [128]byte
	word       atomic.Uint64 // procs<<1 | contended
	next       atomic.Int64  // when the view is stale, in ns since start
	_          [128 - 16]byte
	refreshing atomic.Bool // written by refreshers only: a line of its own
	_          [128]byte
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
	now := int64(time.Since(start))
	if next := view.next.Load(); now >= next && !view.refreshing.Load() && view.refreshing.CompareAndSwap(false, true) {
		refresh(now, next)
		view.refreshing.Store(false)
	}
	w := view.word.Load()
	return int(w >> 1), w&1 != 0
}

// ForceView fixes the processor view at procs processors and contended until
// restore is called (which reads the machine again): for tests of what the
// view decides, which must not depend on the machine they run on.
func ForceView(procs int, contended bool) (restore func()) {
	w := uint64(procs) << 1
	if contended {
		w |= 1
	}
	view.word.Store(w)
	view.next.Store(math.MaxInt64) // no refresh until restore
	return Refresh
}

// Refresh makes the next Procs read the processors afresh, for a caller that
// just changed GOMAXPROCS (tests).
func Refresh() { view.next.Store(0) }

// refresh reads the processor view; its store of word publishes it to every
// later Procs (atomics are sequentially consistent). next is the deadline the
// refresher saw: the CAS below leaves a Refresh made meanwhile (next = 0) in
// place, so the change that asked for it is read by the next Procs.
func refresh(now, next int64) {
	procs := runtime.GOMAXPROCS(0)
	contended := false
	if On(Load) {
		if cpus := allowedCPUs(); cpus > 0 && cpus < procs {
			procs = cpus
		}
		contended = othersWaiting(procs)
	}
	w := uint64(procs) << 1
	if contended {
		w |= 1
	}
	view.word.Store(w)
	view.next.CompareAndSwap(next, now+int64(refreshEvery))
}

// Crowded reports whether the machine is contended, or the process may use
// one CPU only (hint Load): a loop
// (ForRange) then runs on its caller alone, since a worker woken for it would
// wait for a CPU and the caller for that worker. It refreshes the view as
// Procs does (a clock read), so the answer follows the machine although
// nobody spins meanwhile.
func Crowded() bool {
	if !On(Load) {
		return false
	}
	procs, contended := Procs()
	return contended || procs <= 1
}

// Budget returns how long a waiter should spin when goroutines goroutines
// (spinners and the goroutines they wait for, together) share the processors:
// Allow(Default, goroutines).
func Budget(goroutines int) time.Duration { return Allow(Default, goroutines) }

// Allow returns budget (an explicit one, such as a set's WithSpin, or
// Default) as the policy allows it for goroutines goroutines: 0 with one
// processor (the awaited goroutine cannot run while the waiter spins) or on a
// contended machine (Load); at most Oversubscribed when the goroutines
// outnumber the processors (Oversub); else unchanged.
func Allow(budget time.Duration, goroutines int) time.Duration {
	if budget <= 0 {
		return 0
	}
	procs, contended := Procs()
	switch {
	case procs <= 1, contended && On(Load):
		return 0
	case goroutines > procs && On(Oversub):
		return min(budget, Oversubscribed)
	default:
		return budget
	}
}

// Idle returns the budget of an idle worker with spin state sp: after
// sp.Misses consecutive runs that did not need it (hint Demand) an eighth of
// budget after one, 0 after two or more; else budget, stretched by what
// Learn recorded (hint Learn). The policy's cap (Allow) applies on top.
func Idle(budget time.Duration, sp *Spinner) time.Duration {
	if On(Demand) {
		switch {
		case sp.Misses == 1:
			return Allow(budget/8, 1)
		case sp.Misses > 1:
			return 0
		}
	}
	if On(Learn) {
		budget <<= sp.boost
	}
	return Allow(budget, 1)
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
	if procs, _ := Procs(); goroutines > procs {
		return 64
	}
	return -1
}

// burst bounds. A poll is a load of a cached line, so a maxBurst burst lasts
// one to two microseconds: short enough that a goroutine queued behind a
// spinner is not held up for long, long enough that the yield (~100 ns) and the
// clock read cost little of the spin.
const (
	maxBurst = 1024
	minBurst = 1
	// longYield is how long a runtime.Gosched must take for the waiter to
	// conclude that another goroutine ran on its processor meanwhile; a bare
	// yield costs about a fifth of it (BenchmarkGosched in this package).
	longYield = 500 * time.Nanosecond
	// clockEvery: with short bursts, one round in clockEvery is timed.
	clockEvery = 8
	// longBurst: bursts at least this long are timed every round (the
	// clock read is small against them).
	longBurst = 64
)

// Spinner is one waiter's spin state: how many polls it makes between two
// yields (hint Bursts), and how many runs in a row did not need it (Demand,
// kept by its owner). The zero value starts at the longest burst. A Spinner
// belongs to one goroutine at a time (hand-overs need a happens-before edge).
type Spinner struct {
	burst  int32 // polls per burst; 0 means maxBurst
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

// Burst returns the number of polls between two yields the Spinner uses now.
func (sp *Spinner) Burst() int {
	if sp == nil || sp.burst == 0 || !On(Bursts) {
		return maxBurst
	}
	return int(sp.burst)
}

// adapt shortens the bursts after a wait that ended right after a long yield
// (another goroutine, most likely the awaited one, ran on this processor) and
// lengthens them otherwise: with the two on one processor, every hand-off
// waits for the spinner's burst to end.
func (sp *Spinner) adapt(sharedP bool) {
	if sp == nil || !On(Bursts) {
		return
	}
	b := sp.Burst()
	if sharedP {
		b = max(b/4, minBurst)
	} else {
		b = min(b*2, maxBurst)
	}
	if int32(b) != sp.burst { // write only on change: the Spinner may share a line
		sp.burst = int32(b)
	}
}

// Until polls done until it returns true or about budget has passed, yielding
// the processor between bursts so that other goroutines (possibly the one
// being waited for) run on it even with GOMAXPROCS = 1 or more spinners than
// processors (a spin loop without yields stalls such a machine). It reports
// whether done returned true. budget <= 0 polls once. sp may be nil.
//
// The clock is read around one yield in clockEvery (and around every yield
// while bursts are long): a clock read costs about as much as a short burst
// on a VM. The budget may so be overrun by up to clockEvery short rounds.
func Until(budget time.Duration, sp *Spinner, done func() bool) bool {
	if done() {
		return true
	}
	if budget <= 0 {
		return false
	}
	start := time.Now()
	burst := sp.Burst()
	for round := 0; ; round++ {
		for range burst {
			if done() {
				sp.adapt(false)
				return true
			}
		}
		timed := burst >= longBurst || round%clockEvery == 0
		var before time.Time
		if timed {
			before = time.Now()
		}
		runtime.Gosched()
		if !timed {
			if done() {
				return true
			}
			continue
		}
		now := time.Now()
		if done() {
			sp.adapt(now.Sub(before) > longYield)
			return true
		}
		if now.Sub(start) >= budget {
			return false
		}
	}
}

// Decoy is the lure of hint Lure. Go's scheduler puts a goroutine readied by
// another one (a channel send, as a semaphore's Signal is) in the readier's
// runnext slot: it runs on the readier's processor when the readier blocks or
// yields. An idle processor woken for it may take it from there only after a
// pause (a few microseconds, stretched by timer slack), while goroutines in
// the ordinary run queue it takes at once. A waker that runs on after waking
// workers (a caller-runs caller, a worker waking its children) so keeps them
// off the other processors, and a short run ends on its caller alone.
//
// The decoy is a goroutine blocked on an unbuffered channel (Serve). Right
// after waking workers, a waker readies it (Lure): the decoy takes runnext,
// which pushes the worker into the run queue, where the woken processor
// takes it. It carries no data and touches no state of the protocol. The zero
// value is not usable: make one with NewDecoy.
type Decoy struct {
	ch      chan struct{}
	done    chan struct{}
	stopped atomic.Bool
	lured   atomic.Uint64 // single writer: the decoy
}

// NewDecoy returns a decoy; nobody serves it yet.
func NewDecoy() *Decoy { return &Decoy{ch: make(chan struct{}), done: make(chan struct{})} }

// Serve runs the decoy until Stop.
func (dc *Decoy) Serve() {
	for {
		select {
		case <-dc.ch:
			dc.lured.Add(1)
		case <-dc.done:
			return
		}
	}
}

// Lure readies the decoy if it waits and hint Lure is on, after the caller
// signalled parked workers and before it runs on (a later Signal would take
// runnext back). With one processor there is nowhere else to run a woken
// worker, and a lure would only add a switch: GOMAXPROCS is read here, on a
// path that has just paid for a wake-up.
func (dc *Decoy) Lure() {
	if !On(Lure) || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	select { // a non-blocking send fails without a lock when nobody waits
	case dc.ch <- struct{}{}:
	default:
	}
}

// Lured reports how many lures the decoy received.
func (dc *Decoy) Lured() uint64 { return dc.lured.Load() }

// Stop ends Serve; later calls do nothing.
func (dc *Decoy) Stop() {
	if dc.stopped.CompareAndSwap(false, true) {
		close(dc.done)
	}
}
