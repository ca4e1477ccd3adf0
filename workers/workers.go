// Package workers provides Workers, a named set of persistent worker
// goroutines that run n copies of a task and wait for them: the Go
// counterpart of HotSpot's WorkerThreads.
//
// Make one set per process and run every parallel phase on it: ForRange for
// loops (ForChunks when each copy needs scratch memory), Do for a fork-join
// of n calls, RunContext for errgroup-style fan-outs, RunN for tasks that
// use their worker id, RunTeam for copies that meet at barriers. Workers
// start when a run first needs them, spin briefly between runs, then park;
// the caller runs copies itself where the call allows it, so a run of one
// copy wakes nobody.
//
// Runs on a set from New wait for each other in FIFO order. A set that
// independent goroutines share (a server's handlers, libraries) should come
// from Acquire or be made WithConcurrentRuns: there a call that finds the set
// busy runs on its caller instead of waiting (a loop as one copy). A library
// takes its set in a package variable and never releases it:
//
//	var set, _ = workers.Acquire("mylib", runtime.NumCPU())
//
// A set never has more than MaxWorkers workers; loops and Do use no more
// copies than GOMAXPROCS, read as they start.
//
// What a call does is the same on every machine. A loop plans its copies
// and its schedule as it starts and runs on its caller alone, as one copy,
// only when it plans one copy or finds a set with concurrent runs busy;
// every index runs once whatever a body call does; the wait policy, which
// reads the machine's load, only decides how long goroutines spin before
// they park. A run either holds the set from its start to its end or never
// does: from inside a copy of a run that holds it, a plain run, RunTeam or
// Close of the same set panics (it would wait for itself); from inside a run
// that does not (on a set with concurrent runs: a busy run, or a task's run
// of one caller-runs copy), it behaves as a call from the caller.
package workers

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
)

// PanicError is what a run panics with, once every copy has returned, when a
// copy panicked or called runtime.Goexit on a worker, or a task method
// panicked: it reports the first. The set stays usable.
type PanicError struct {
	Task     string // the task's Name ("workers.ForRange" for the set's own calls)
	Worker   int    // the copy's id (Do, RunContext: the i); -1 outside any copy
	OnCaller bool   // it happened on the goroutine that made the call
	Goexit   bool   // runtime.Goexit, not a panic
	Value    any    // the value passed to panic
	Stack    []byte // the stack where it panicked
	Panics   int    // how many copies of the run panicked
	Method   string // the task method if not Work ("CallerCanRun", "Name")
}

// Error returns the value, where it happened and the stack.
func (p *PanicError) Error() string { return (*gang.PanicError)(p).Error() }

// Unwrap returns Value if it is an error.
func (p *PanicError) Unwrap() error { return (*gang.PanicError)(p).Unwrap() }

// repanic raises gang's report of a run's panics as the set's *PanicError
// (the same struct: the conversion copies nothing).
func repanic(p *gang.PanicError) {
	if p != nil {
		panic((*PanicError)(p))
	}
}

// asSetPanic is deferred around gang calls that may raise gang's report
// themselves: when a caller copy's runtime.Goexit gives way to another copy's
// panic. It re-raises that report as the set's type and any other value as
// it is; on a return or a Goexit, recover returns nil and it does nothing.
func asSetPanic() {
	if v := recover(); v != nil {
		if p, ok := v.(*gang.PanicError); ok {
			v = (*PanicError)(p)
		}
		panic(v)
	}
}

// Workers is a named set of up to MaxWorkers persistent worker goroutines.
// Create one with New and release it with Close. All methods are safe for
// concurrent use. A Workers must not be copied.
type Workers struct {
	set
	acquired bool // from Acquire: only its last release closes it; read-only
}

// set is a worker set's state and run methods; Workers embeds it and adds Close.
type set struct {
	// mu serializes runs, inline ones included, and Close; its word is the
	// holder's token (see runLock), read by the nested-run and cycle checks.
	mu runLock

	// Counters, atomic so Stats may read them at any time and so that, on a
	// set with concurrent runs, runs that do not hold mu (inline, busy) may
	// add to them too. runs and callerCopies share the coordinator's line
	// with mu, which it owns during a run anyway.
	runs         atomic.Uint64
	callerCopies atomic.Uint64 // of runs that are not inline

	// Inline runs, counted when they end: inlineRuns (an atomic add; on a
	// set with concurrent runs) and inlineHeld (written by the run lock's
	// holder only) when the copy returned or panicked (a caller copy each),
	// inlineExits when it called runtime.Goexit.
	inlineRuns, inlineHeld, inlineExits atomic.Uint64

	// Runs that waited for the lock and their total wait in nanoseconds,
	// written by the waiters (slow path only).
	waits, waitNanos atomic.Uint64

	concurrent bool          // WithConcurrentRuns; read-only after New
	busyRuns   atomic.Uint64 // runs that found mu held (concurrent runs only)

	// What the wait policy and the runs' callers did that Stats explains:
	// loops whose copies GOMAXPROCS cut below ActiveWorkers, and runs
	// offered to workers whose caller ran every copy.
	cappedLoops, callerOnly atomic.Uint64

	// crew is the dispatcher and the workers' identities, sized by
	// MaxWorkers. It is replaced only by grow (Acquire), under the run lock
	// and createMu, once its workers have exited; a run uses the crew it
	// loaded under the run lock, anything else loads it afresh.
	crew atomic.Pointer[crew]

	name  string
	place placement
	spin  time.Duration // WithSpin, for every crew's dispatcher

	active atomic.Int32 // the copy count of Run; any goroutine may change it

	// createMu guards worker creation, the closed transition and
	// placementErrs. created is written under createMu and read atomically.
	createMu      sync.Mutex
	created       atomic.Int32
	closed        atomic.Bool
	placementErrs []error

	wg sync.WaitGroup // every worker goroutine

	// retired sums the counters of the workers of crews that grow replaced.
	retired gang.WorkerStats // guarded by createMu

	team atomic.Pointer[cachedTeam] // kept between runs (see RunTeam)
}

// crew is a set's dispatcher and its workers, sized for max.
type crew struct {
	d   *gang.Dispatcher
	max int
	// workers[i] is worker i, published (atomic store) once it is created;
	// Stats and the nested-run checks read it without a lock.
	workers []atomic.Pointer[worker]
	// retiring is set by grow, under createMu, before it stops the crew's
	// workers: no worker is created for it any more (ensureCreated).
	retiring atomic.Bool
}

func newCrew(max int, spin time.Duration) *crew {
	c := &crew{d: gang.New(max), max: max, workers: make([]atomic.Pointer[worker], max)}
	c.d.SetSpin(spin)
	return c
}

// addWorkerStats adds the counters of the crew's first k workers to sum.
func (c *crew) addWorkerStats(sum *gang.WorkerStats, k int) {
	for i := range min(k, c.max) {
		s := c.d.WorkerStats(i)
		sum.Copies += s.Copies
		sum.Ready += s.Ready
		sum.Spun += s.Spun
		sum.Parks += s.Parks
		sum.Wakeups += s.Wakeups
	}
}

// worker is one worker goroutine's identity; its counters live in the
// dispatcher's slot for it (gang.WorkerStats).
type worker struct {
	// g is the worker goroutine's token while it is alive (0 otherwise). A
	// Run from inside a copy on this worker compares its own token with it.
	g atomic.Uintptr
	// placed is closed once the worker applied its placement and recorded
	// the failures, before it serves: see ensureCreated. Nil, and not
	// waited for, on a set without placement.
	placed chan struct{}
}

// New returns a set named name of at most maxWorkers workers, started when a
// run first needs them. It panics if maxWorkers is outside [1,
// tasks.MaxCopies] or an option is invalid.
func New(name string, maxWorkers int, opts ...Option) *Workers {
	w := &Workers{}
	w.init(name, maxWorkers, newConfig("New", name, maxWorkers, opts))
	return w
}

// init sets up a zero set in place.
func (w *set) init(name string, maxWorkers int, c config) {
	*w = set{name: name, place: c.place, spin: c.spin, concurrent: c.concurrent}
	w.crew.Store(newCrew(maxWorkers, c.spin))
	w.active.Store(int32(c.active))
	register(w) // every set takes part in the cycle check; Close unregisters
}

// check panics, naming op, unless w is a set made by New or Acquire and not
// closed: a nil *Workers or a zero Workers has no dispatcher.
func (w *set) check(op string) {
	if w == nil || w.crew.Load() == nil || w.closed.Load() {
		w.panicUnusable(op)
	}
}

//go:noinline
func (w *set) panicUnusable(op string) {
	switch {
	case w == nil:
		panic(fmt.Sprintf("workers: %s on a nil *Workers: make a set with New or Acquire", op))
	case w.crew.Load() == nil:
		panic(fmt.Sprintf("workers: %s on a zero Workers: make a set with New or Acquire", op))
	}
	w.panicClosed(op)
}

// s returns w's set, or panics naming op if w is nil: every method of
// Workers goes through it, so a nil *Workers says what is wrong.
func (w *Workers) s(op string) *set {
	if w == nil {
		(*set)(nil).panicUnusable(op)
	}
	return &w.set
}

// Name returns the set's name.
func (w *Workers) Name() string { return w.s("Name").Name() }

// Name is Workers.Name on a set that is not nil.
func (w *set) Name() string { return w.name }

// MaxWorkers returns the most workers the set may create.
func (w *Workers) MaxWorkers() int { return w.s("MaxWorkers").MaxWorkers() }

// MaxWorkers is Workers.MaxWorkers on a set that is not nil.
func (w *set) MaxWorkers() int {
	if c := w.crew.Load(); c != nil {
		return c.max
	}
	return 0
}

// ActiveWorkers returns the number of copies Run runs.
func (w *Workers) ActiveWorkers() int { return w.s("ActiveWorkers").ActiveWorkers() }

// ActiveWorkers is Workers.ActiveWorkers on a set that is not nil.
func (w *set) ActiveWorkers() int { return int(w.active.Load()) }

// CreatedWorkers returns the number of workers started so far.
func (w *Workers) CreatedWorkers() int { return w.s("CreatedWorkers").CreatedWorkers() }

// CreatedWorkers is Workers.CreatedWorkers on a set that is not nil.
func (w *set) CreatedWorkers() int { return int(w.created.Load()) }

// SetActiveWorkers sets the number of copies Run runs, creates the workers it
// needs, and returns n. It panics if n is outside [1, MaxWorkers] or the set
// is closed.
func (w *Workers) SetActiveWorkers(n int) int { return w.s("SetActiveWorkers").SetActiveWorkers(n) }

// SetActiveWorkers is Workers.SetActiveWorkers on a set that is not nil.
func (w *set) SetActiveWorkers(n int) int {
	w.check("SetActiveWorkers")
	w.checkN("SetActiveWorkers", n)
	w.ensureCreated("SetActiveWorkers", n)
	w.active.Store(int32(n))
	return n
}

// Run is RunN(t, ActiveWorkers()).
func (w *Workers) Run(t tasks.Task) { w.s("Run").Run(t) }

// Run is Workers.Run on a set that is not nil.
func (w *set) Run(t tasks.Task) { w.runN("Run", t, int(w.active.Load())) }

// RunN runs n copies of t, ids 0..n-1, each once, and returns when all have
// returned; n is at most MaxWorkers. Copies run on the workers; if t opts in
// to caller-runs (tasks.CallerRuns), the caller runs copy n-1 and every copy
// no worker has started yet, and a single copy inline. Every copy's writes
// are visible when RunN returns; the set keeps no reference to t. With
// runtime/trace on, the run and each copy are regions named after t.
//
// If copies panic (or call runtime.Goexit on a worker), the others still
// run, then RunN panics with a *PanicError for the first; the set stays
// usable. RunN also panics if t is nil, n is out of range, the set is
// closed, or the run could never start: called from a copy of a run on the
// same set, or closing a cycle of nested runs across sets.
func (w *Workers) RunN(t tasks.Task, n int) { w.s("RunN").RunN(t, n) }

// RunN is Workers.RunN on a set that is not nil.
func (w *set) RunN(t tasks.Task, n int) { w.runN("RunN", t, n) }

func (w *set) runN(op string, t tasks.Task, n int) {
	w.check(op)
	if t == nil {
		panic(fmt.Sprintf("workers: %s on %q: nil task", op, w.name))
	}
	w.checkN(op, n)
	plan, pe := gang.Prepare(t)
	repanic(pe)
	if name := plan.Name(); name != "" {
		// Tracing is on (Prepare asked for the name): one region per run,
		// in a frame of its own so that the common path has no defer.
		w.runTraced(op, plan, n, name)
		return
	}
	w.runPlan(op, plan, n)
}

// runTraced is runPlan inside a trace region named after the task.
func (w *set) runTraced(op string, plan gang.Plan, n int, name string) {
	defer trace.StartRegion(context.Background(), name).End()
	w.runPlan(op, plan, n)
}

// runPlan runs plan: a plain run waits for the set and runs on its workers;
// a caller-runs run has paths of its own (callerruns.go).
func (w *set) runPlan(op string, plan gang.Plan, n int) {
	if plan.CallerRuns() {
		w.runCallerRuns(op, plan, n)
		return
	}
	_ = w.lockContext(context.Background(), op, false) // never done: always gets the lock
	repanic(w.runHeld(op, plan, n))
}

// runHeld runs plan through the dispatcher under the run lock, then releases
// it. The workers the run needs are made here, under the lock, so that no
// run meets a set whose dispatcher it did not check.
func (w *set) runHeld(op string, plan gang.Plan, n int) *gang.PanicError {
	defer w.mu.unlock()
	if plan.CallerRuns() {
		defer asSetPanic()
	}
	if w.closed.Load() {
		w.panicClosed(op)
	}
	need := n
	if plan.CallerRuns() {
		need-- // the caller runs copy n-1
	}
	if int(w.created.Load()) < need {
		w.ensureCreated(op, need)
	}
	w.runs.Add(1)
	ran, p := w.crew.Load().d.Run(plan, n) // the lock holder's crew: grow needs the lock
	if ran > 0 {
		w.callerCopies.Add(uint64(ran))
		if ran == n {
			w.callerOnly.Add(1) // offered to workers, but the caller ran every copy
			if trace.IsEnabled() {
				trace.Log(context.Background(), "workgang", "the caller ran every copy before a worker claimed one")
			}
		}
	}
	return p
}

// token is what the run lock records as its holder. A holder that runs
// user code (caller-runs, inline) must be identified, or a nested run from
// its copy could not be told from a concurrent one. The cycle check across
// sets also wants the holders of plain runs; they are identified where
// goid.Get is one instruction (amd64, arm64) and anonymous elsewhere, where
// it parses a stack (cycles through plain runs then hang undetected).
func token(runsUserCode bool) uintptr {
	if runsUserCode || goid.Fast {
		return goid.Get()
	}
	return anonToken
}

// Close waits for the run in progress, stops the workers and waits for their
// goroutines to exit; later runs panic, a second Close does nothing. Busy
// runs on their callers (WithConcurrentRuns) are not waited for. Close
// panics from inside a copy of the set's run and on a set from Acquire.
func (w *Workers) Close() {
	if s := w.s("Close"); s.crew.Load() == nil {
		s.panicUnusable("Close")
	}
	if w.acquired {
		panic(fmt.Sprintf("workers: Close on %q: a set from Acquire is closed by its last release (the function Acquire returned), not by Close", w.name))
	}
	w.close()
}

func (w *set) close() {
	_ = w.lockContext(context.Background(), "Close", true) // never done: always gets the lock
	defer w.mu.unlock()
	w.createMu.Lock()
	if w.closed.Swap(true) {
		w.createMu.Unlock()
		return
	}
	k := int(w.created.Load())
	w.createMu.Unlock()
	w.crew.Load().d.Stop(k)
	w.wg.Wait()
	unregister(w)
}

// lockContext takes the run lock, or returns ctx's cause (see waitLock); the
// slow path detects nested calls. runsUserCode tells whether this goroutine
// will run copies while it holds it (see token).
func (w *set) lockContext(ctx context.Context, op string, runsUserCode bool) error {
	if w.mu.tryLock(token(runsUserCode)) {
		return nil
	}
	return w.lockSlow(op, runsUserCode, ctx)
}

func (w *set) lockSlow(op string, runsUserCode bool, ctx context.Context) error {
	g := goid.Get()
	if w.mu.owner() == g {
		panic(fmt.Sprintf("workers: %s on %q called from inside a copy of a task that this goroutine is running on the same set; a nested run would deadlock", op, w.name))
	}
	if w.workerOf(g) >= 0 {
		panic(fmt.Sprintf("workers: %s on %q called from inside a copy running on a worker of the same set; a nested run would deadlock", op, w.name))
	}
	// A goroutine outside every run cannot close a cycle (nothing waits
	// for it); one inside a run waits in the same line but re-checks.
	return w.waitLock(op, g, token(runsUserCode), insideAnyRun(g), ctx)
}

// workerOf returns the index of the worker whose goroutine is g, or -1.
func (w *set) workerOf(g uintptr) int {
	c := w.crew.Load()
	for i := range min(int(w.created.Load()), c.max) {
		if wk := c.workers[i].Load(); wk != nil && wk.g.Load() == g {
			return i
		}
	}
	return -1
}

func (w *set) checkN(op string, n int) {
	if n < 1 || n > w.MaxWorkers() {
		w.panicN(op, n)
	}
}

//go:noinline
func (w *set) panicN(op string, n int) {
	hint := ""
	max := w.MaxWorkers()
	if n > max && op == "RunN" {
		// RunN's ids are worker slots; RunContext and ForRange take any n.
		hint = "; for more copies than workers use RunContext (any n) or ForRange"
	}
	panic(fmt.Sprintf("workers: %s on %q: n = %d out of range [1, %d]%s", op, w.name, n, max, hint))
}

func (w *set) panicClosed(op string) {
	panic(fmt.Sprintf("workers: %s on %q: set is closed", op, w.name))
}

// ensureCreated starts workers until at least n exist. Only a worker with a
// placement is waited for, until it applied it, so that PlacementErrors is
// complete once a run that used it returns; an unplaced one costs no channel.
func (w *set) ensureCreated(op string, n int) {
	w.createMu.Lock()
	c := w.crew.Load()
	for c.retiring.Load() { // grow is replacing it: wait for the new one
		w.createMu.Unlock()
		runtime.Gosched()
		w.createMu.Lock()
		c = w.crew.Load()
	}
	if w.closed.Load() {
		w.createMu.Unlock()
		w.panicClosed(op)
	}
	var started []*worker // the placed ones
	for i := int(w.created.Load()); i < min(n, c.max); i++ {
		wk := &worker{}
		if w.place.lockThread {
			wk.placed = make(chan struct{})
			started = append(started, wk)
		}
		c.workers[i].Store(wk)
		w.wg.Add(1)
		go w.work(c.d, i, wk, true)
		// Publish after the goroutine exists; Run only needs "created >= n"
		// to mean n goroutines will serve, which holds from here on.
		w.created.Store(int32(i + 1))
	}
	w.createMu.Unlock()
	// Outside createMu: the workers take it to record failures.
	for _, wk := range started {
		<-wk.placed
	}
}

// work is the body of worker goroutine i of dispatcher d: place it, label
// it, then serve copies until stopped. first is false for a replacement
// after a Goexit, which serves the same d.
func (w *set) work(d *gang.Dispatcher, i int, wk *worker, first bool) {
	var restore func() []error
	if w.place.lockThread {
		// Never unlocked: the thread ends with the goroutine, so its settings
		// cannot leak (restore is for the main thread: see applyPlacement).
		runtime.LockOSThread()
		var errs []error
		restore, errs = applyPlacement(&w.place, i)
		if len(errs) > 0 {
			w.recordPlacement(i, errs)
		}
	}
	if first && wk.placed != nil {
		close(wk.placed)
	}
	w.label(strconv.Itoa(i))
	wk.g.Store(goid.Get())
	stopped := false
	defer func() {
		wk.g.Store(0)
		if restore != nil {
			// Still on the locked thread; before Done, so that Close
			// returns with the settings restored and any failure recorded.
			if errs := restore(); len(errs) > 0 {
				w.recordPlacement(i, errs)
			}
		}
		if !stopped {
			// A copy called runtime.Goexit (already retired and recorded for
			// Run): start a replacement before this goroutine's Done, so
			// Close's Wait cannot return in between.
			w.wg.Add(1)
			go w.work(d, i, wk, false)
		}
		w.wg.Done()
	}()
	d.Serve(i)
	stopped = true
}

// label gives the calling goroutine, one of the set's, the set's pprof
// labels, and no others (it must not keep the labels of the goroutine that
// started it: a request's, say).
func (w *set) label(worker string) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(),
		pprof.Labels("workgang.set", w.name, "workgang.worker", worker)))
}

// grow raises the set's MaxWorkers to max (Acquire: the largest request
// wins). Under the run lock, so no run uses the old crew: its workers are
// stopped and waited for, and a crew of max slots replaces it; workers start
// again as runs need them. ActiveWorkers follows if it was MaxWorkers. From
// inside a copy of the set's run it panics, as a nested run does.
func (w *set) grow(op string, max int) {
	_ = w.lockContext(context.Background(), op, false)
	defer w.mu.unlock()
	w.createMu.Lock()
	old := w.crew.Load()
	if max <= old.max || w.closed.Load() {
		w.createMu.Unlock()
		return
	}
	old.retiring.Store(true)
	k := int(w.created.Load())
	w.createMu.Unlock()
	old.d.Stop(k)
	w.wg.Wait() // outside createMu: exiting workers may take it
	w.createMu.Lock()
	old.addWorkerStats(&w.retired, k)
	w.crew.Store(newCrew(max, w.spin))
	w.created.Store(0)
	w.active.CompareAndSwap(int32(old.max), int32(max))
	w.createMu.Unlock()
}

func (w *set) recordPlacement(i int, errs []error) {
	w.createMu.Lock()
	defer w.createMu.Unlock()
	for _, err := range errs {
		w.placementErrs = append(w.placementErrs, fmt.Errorf("workers: %q worker %d: %w", w.name, i, err))
	}
}

// PlacementErrors returns the placement failures so far (the workers run
// unplaced).
func (w *Workers) PlacementErrors() []error { return w.s("PlacementErrors").PlacementErrors() }

// PlacementErrors is Workers.PlacementErrors on a set that is not nil.
func (w *set) PlacementErrors() []error {
	w.createMu.Lock()
	defer w.createMu.Unlock()
	return append([]error(nil), w.placementErrs...)
}
