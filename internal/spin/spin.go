// Package spin is workgang's one spin policy: how long a goroutine that waits
// for another one polls before it parks, how the budget shrinks when spinners
// would take processors from the goroutines they wait for, and the poll loop
// itself (bursts of polls separated by runtime.Gosched, with bursts that adapt
// to whether the awaited goroutine shares this processor).
//
// Every waiter in the module takes its budget from here: the dispatcher's idle
// workers and its coordinator (package gang), the semaphore's waiters, and the
// work-stealing Terminator (package tasks/steal). The package imports only the
// standard library.
package spin

import (
	"runtime"
	"time"
)

// Default is the spin budget of a waiter whose budget was never set, when the
// goroutines involved fit in GOMAXPROCS. It is a few times the cost of parking
// and waking a goroutine on a typical Linux VM, so a waiter spins about as long
// as a park would cost it (the "no worse than twice optimal" rule of
// spin-then-block).
const Default = 50 * time.Microsecond

// Oversubscribed is the budget when the spinning goroutines, with the ones
// they wait for, outnumber GOMAXPROCS: spinners then take turns on the same
// processors as the goroutines with real work, so long spins only delay them.
// It is about what parking and waking costs, so a short wait still ends
// without a park. The benchmark behind it is BenchmarkGrain in package
// workers and the perf harness's grain section (docs/perf.md, "Rejected designs").
const Oversubscribed = 3 * time.Microsecond

// Budget returns how long a waiter should spin when goroutines goroutines
// (spinners and the goroutines they wait for, together) share the current
// GOMAXPROCS: Default when they fit, Oversubscribed when they do not, and 0
// with GOMAXPROCS = 1, where the awaited goroutine cannot run while the
// waiter spins. GOMAXPROCS is read at each call (it takes the scheduler lock
// briefly): call it on slow paths only.
func Budget(goroutines int) time.Duration {
	return budgetFor(goroutines, runtime.GOMAXPROCS(0))
}

func budgetFor(goroutines, procs int) time.Duration {
	switch {
	case procs <= 1:
		return 0
	case goroutines > procs:
		return Oversubscribed
	default:
		return Default
	}
}

// CapFor lowers budget to what the policy allows goroutines goroutines on
// procs processors; it is how an explicit budget (an option set by the user)
// still yields to oversubscription. The caller supplies GOMAXPROCS, so that
// a hot path can cache it.
func CapFor(budget time.Duration, goroutines, procs int) time.Duration {
	return min(budget, budgetFor(goroutines, procs))
}

// burst bounds. A poll is a load of a cached line, so a maxBurst burst lasts
// one to two microseconds: short enough that a goroutine queued behind a
// spinner is not held up for long, long enough that the yield (~100 ns) and the
// clock read cost little of the spin. The benchmark behind it is
// BenchmarkRun in package workers with the burst set by a temporary knob
// (docs/perf.md, "Rejected designs").
const (
	maxBurst = 1024
	minBurst = 1
	// longYield is how long a runtime.Gosched must take for the waiter to
	// conclude that another goroutine ran on its processor meanwhile; a bare
	// yield costs about a fifth of it (BenchmarkGosched in this package).
	longYield = 500 * time.Nanosecond
)

// Spinner is one waiter's adaptive spin state: how many polls it makes between
// two yields. The zero value starts at the longest burst. A Spinner belongs to
// one goroutine at a time (hand-overs need a happens-before edge).
//
// Why adapt: a spinner yields between bursts so that the goroutine it waits
// for can run. When the two share a processor, every hand-off waits for the
// spinner's burst to end, so long bursts make each hand-off cost a burst
// instead of a yield. A waiter that finds what it waits for right after a
// yield that took noticeably longer than a bare yield (something else ran on
// its processor: most likely the goroutine it waited for) shortens its bursts;
// one that finds it mid-burst, or after a quick yield, lengthens them again.
type Spinner struct {
	burst int32 // polls per burst; 0 means maxBurst
}

// Burst returns the number of polls between two yields the Spinner uses now.
func (sp *Spinner) Burst() int {
	if sp == nil || sp.burst == 0 {
		return maxBurst
	}
	return int(sp.burst)
}

func (sp *Spinner) adapt(sharedP bool) {
	if sp == nil {
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
// processors. It reports whether done returned true. budget <= 0 polls once.
// sp may be nil (fixed bursts).
//
// The clock is read around one yield in clockEvery (and around every yield
// while bursts are long): a clock read costs about as much as a short burst
// on a VM, and with one-poll bursts (a waiter sharing its processor) reading
// it twice per yield was most of the waiting's cost (BenchmarkRun n=2 in
// package workers, profiled). The budget may so be overrun by up to
// clockEvery short rounds.
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

const (
	// clockEvery: with short bursts, one round in clockEvery is timed.
	clockEvery = 8
	// longBurst: bursts at least this long are timed every round (the
	// clock read is small against them).
	longBurst = 64
)
