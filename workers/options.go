package workers

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/tasks"
)

// Option configures a set in New.
type Option func(*config)

type config struct {
	spin                 time.Duration
	active               int
	place                placement
	concurrent, acquired bool
}

// newConfig applies opts for New(name, maxWorkers, opts...), panicking (op
// names the caller) for every argument New rejects.
func newConfig(op, name string, maxWorkers int, opts []Option) config {
	if maxWorkers < 1 || maxWorkers > tasks.MaxCopies {
		panic(fmt.Sprintf("workers: %s(%q): maxWorkers = %d out of range [1, %d]", op, name, maxWorkers, tasks.MaxCopies))
	}
	c := config{active: maxWorkers, spin: spin.Idle}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("workers: %s(%q): option %d is nil", op, name, i))
		}
		o(&c)
	}
	if c.active < 1 || c.active > maxWorkers {
		panic(fmt.Sprintf("workers: %s(%q): WithActiveWorkers(%d) out of range [1, %d]", op, name, c.active, maxWorkers))
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

// WithSpin sets how long an idle worker, or a caller waiting for its run's
// end, polls before parking (default 1 ms; 0, as with one processor or while
// other processes wait for the CPUs, parks at once). It panics if d < 0.
func WithSpin(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("workers: WithSpin: negative spin budget %v", d))
	}
	return func(c *config) { c.spin = d }
}

// WithActiveWorkers sets the initial ActiveWorkers (default maxWorkers); it
// does not create workers. New panics if n is outside [1, maxWorkers].
func WithActiveWorkers(n int) Option { return func(c *config) { c.active = n } }

// WithConcurrentRuns is for a set that independent goroutines share (sets
// from Acquire have it): a caller-runs run that finds the set busy, or is
// nested in one of its copies, runs on its caller instead of waiting, a loop
// as one copy; plain runs still wait. Overlapping runs share copy ids.
func WithConcurrentRuns() Option { return func(c *config) { c.concurrent = true } }

// WithLockOSThread locks each worker goroutine to an OS thread for life, so
// thread settings stay with it; hand-offs then cost thread switches.
func WithLockOSThread() Option { return func(c *config) { c.place.lockThread = true } }

// WithAffinity pins worker i to CPU cpus[i % len(cpus)] (by default the
// process's CPUs, in turn) and implies WithLockOSThread; PlacementErrors
// reports failures. It panics if a CPU is negative.
func WithAffinity(cpus ...int) Option {
	for _, cpu := range cpus {
		if cpu < 0 {
			panic(fmt.Sprintf("workers: WithAffinity: negative CPU %d", cpu))
		}
	}
	cpus = append([]int(nil), cpus...)
	return func(c *config) { c.place.lockThread, c.place.affinity, c.place.cpus = true, true, cpus }
}

// WithNice sets each worker thread's nice value and implies WithLockOSThread;
// PlacementErrors reports failures. It panics if nice is outside [-20, 19].
func WithNice(nice int) Option {
	if nice < -20 || nice > 19 {
		panic(fmt.Sprintf("workers: WithNice: nice = %d out of range [-20, 19]", nice))
	}
	return func(c *config) { c.place.lockThread, c.place.nice = true, &nice }
}
