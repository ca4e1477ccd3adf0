package workers

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/internal/spin"
)

// Option configures a set in New.
type Option func(*config)

type config struct {
	spin       time.Duration
	spinSet    bool
	active     int
	place      placement
	concurrent bool
}

// newConfig applies opts for New(name, maxWorkers, opts...) and panics, with
// op in the message, for every argument New rejects. Acquire calls it before
// touching the registry, so it rejects the same arguments whether or not the
// name is held.
func newConfig(op, name string, maxWorkers int, opts []Option) config {
	if maxWorkers < 1 || maxWorkers > MaxSetSize {
		panic(fmt.Sprintf("workers: %s(%q): maxWorkers = %d out of range [1, %d]", op, name, maxWorkers, MaxSetSize))
	}
	c := config{active: maxWorkers}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("workers: %s(%q): option %d is nil", op, name, i))
		}
		o(&c)
	}
	if c.active < 1 || c.active > maxWorkers {
		panic(fmt.Sprintf("workers: %s(%q): WithActiveWorkers(%d) out of range [1, %d]", op, name, c.active, maxWorkers))
	}
	if !c.spinSet {
		c.spin = DefaultSpin(maxWorkers)
	}
	return c
}

// placement is what a worker does to its OS thread when it starts.
type placement struct {
	lockThread bool
	affinity   bool  // pin worker i to a CPU
	cpus       []int // the CPUs to choose from; empty: the process's allowed set
	nice       *int  // the nice value for the worker's thread, if set
}

// WithSpin sets how long an idle worker polls for the next run, and the
// coordinator for the end of the current run, before parking. 0 parks at once.
// Without it a set uses DefaultSpin(maxWorkers). It panics if d is negative.
func WithSpin(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("workers: WithSpin: negative spin budget %v", d))
	}
	return func(c *config) { c.spin, c.spinSet = d, true }
}

// WithActiveWorkers sets the initial ActiveWorkers (default maxWorkers); it
// does not create workers. New panics if n is outside [1, maxWorkers].
func WithActiveWorkers(n int) Option {
	return func(c *config) { c.active = n }
}

// WithConcurrentRuns lets runs from different goroutines overlap on the set,
// for a set that many independent submitters share (a server's request
// handlers, many instances of a library). Without it runs never overlap: a
// run waits until the one in progress has returned, which a program with one
// coordinator relies on when it keys per-worker scratch data by copy id. Sets
// from Acquire always have it. With it:
//
//   - A caller-runs run (ForRange, ForRangeContext, RunContext, a task that
//     opted in with tasks.CallerRuns) that finds another run in progress
//     does not wait: its caller runs every copy, ids 0..n-1 in order
//     (Stats.BusyRuns counts these). A run of one copy runs inline at once.
//     Such runs use no worker, so nothing of them outlives their call.
//   - A plain run (a task that does not opt in) waits its turn as without
//     the option, in FIFO order, and its copies run on the workers only.
//   - A caller-runs run started from inside a copy of a run on the same set
//     runs the same way, on that copy's goroutine, instead of panicking; a
//     nested plain run still panics, as it would deadlock.
//
// Copies of overlapping runs therefore share ids (each run has its own
// 0..n-1): key scratch data by run, not by copy id alone.
func WithConcurrentRuns() Option {
	return func(c *config) { c.concurrent = true }
}

// WithLockOSThread locks each worker goroutine to its own OS thread for its
// whole life (runtime.LockOSThread), so thread-level settings stay with it.
//
// It has a price: a locked goroutine's yields and wake-ups are hand-offs
// between OS threads, so only-workers runs of short tasks cost many times
// more than unpinned ones, while caller-runs runs, whose copies mostly stay
// on the caller, are barely affected (docs/perf.md, "Choosing a grain size", from
// go run ./perf -pin). Use placement where thread identity matters more than
// hand-off latency (long phases, priority separation), and measure.
func WithLockOSThread() Option {
	return func(c *config) { c.place.lockThread = true }
}

// WithAffinity pins worker i to one CPU: cpus[i % len(cpus)], or, with no
// cpus, the (i % k)-th of the k CPUs the process may run on (as read with
// sched_getaffinity when the worker starts). It implies WithLockOSThread. A
// CPU the process may not use, or a system without affinity support (only
// Linux has it), does not fail the set: the worker runs unpinned and the
// error is reported by PlacementErrors and Stats. It panics if a CPU number
// is negative.
func WithAffinity(cpus ...int) Option {
	for _, cpu := range cpus {
		if cpu < 0 {
			panic(fmt.Sprintf("workers: WithAffinity: negative CPU %d", cpu))
		}
	}
	cpus = append([]int(nil), cpus...)
	return func(c *config) {
		c.place.lockThread, c.place.affinity, c.place.cpus = true, true, cpus
	}
}

// WithNice sets the nice value (-20..19, lower is more favoured) of each
// worker's OS thread. It implies WithLockOSThread. Lowering it below the
// process's needs privilege; a failure is reported like a failed affinity and
// the worker runs at the process's priority. It panics if nice is outside
// [-20, 19].
func WithNice(nice int) Option {
	if nice < -20 || nice > 19 {
		panic(fmt.Sprintf("workers: WithNice: nice = %d out of range [-20, 19]", nice))
	}
	return func(c *config) { c.place.lockThread, c.place.nice = true, &nice }
}

// DefaultSpin returns the spin budget a set of maxWorkers workers gets by
// default, from the module's one spin policy: semaphore.DefaultSpin when the
// workers fit in GOMAXPROCS, a short budget (about one park and wake-up) when
// they outnumber GOMAXPROCS (spinners then take turns on the same processors,
// so long spins only delay the goroutines with real work), and 0 when
// GOMAXPROCS is 1. Whatever the budget, a worker spins only while recent runs
// needed it (docs/threading-model.md, "Spinning follows demand").
func DefaultSpin(maxWorkers int) time.Duration {
	return spin.Budget(maxWorkers)
}
