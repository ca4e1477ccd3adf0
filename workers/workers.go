// Package workers provides Workers, a named set of persistent worker
// goroutines that run n copies of a task and wait for them.
//
// Make one set per process and run every CPU-bound parallel phase on it:
// ForRange for loops (ForChunks when each copy needs scratch memory), Do for a
// fork-join of n calls, RunContext for fan-outs of n calls that return errors,
// RunN for tasks that use their worker id, RunTeam for copies that meet at
// barriers. Workers start when first needed, spin briefly between runs, then
// park; the caller runs copies too, so a run of one copy wakes nobody.
//
// A set runs at most MaxWorkers calls at once. Calls that block (I/O, a lock
// held elsewhere, a reply) want a goroutine each, as errgroup gives them:
// eight calls that each block for 100 ms take 400 ms with RunContext or Do
// on a set of two workers, and 100 ms with errgroup.
//
// Runs on a set from New wait for each other in FIFO order. A set that
// independent goroutines share (a server's handlers, libraries) should be
// Default, from Acquire or made WithConcurrentRuns: there a call that finds
// the set busy runs on its caller instead of waiting.
//
// Every index of a loop runs once, whatever a body call does; the machine's
// load decides only how long goroutines spin before they park. A call that
// would wait for itself panics instead: from inside a copy of a run that
// holds the set, a plain run, RunTeam or Close of the same set, or a run
// that closes a cycle of nested runs across sets.
//
// Once warm, Run, RunN, RunTeam, ForRange and Do allocate nothing of their
// own; RunContext and ForRangeContext allocate their context (2), ForChunks
// its task and each copy's iterator (5 at two copies). A body closure that
// captures variables, or a method value, written at the call escapes and is
// allocated on every call: build it once outside the hot loop, or reuse a
// Task value (docs/threading-model.md, "Allocations").
package workers

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
)

// PanicError is what a call panics with once every copy has returned: the
// first copy (or loop body call) that panicked or called runtime.Goexit on a
// worker, or a task method that panicked. The set stays usable.
type PanicError struct {
	Task     string // the task's Name ("workers.ForRange" for the set's own calls)
	Worker   int    // the copy's id (Do, RunContext: the i); -1 outside any copy
	OnCaller bool   // on the calling goroutine
	Goexit   bool   // runtime.Goexit, not a panic
	Value    any    // the value passed to panic
	Stack    []byte // where it panicked
	Panics   int    // how many copies (with Calls: body calls) panicked
	Method   string // the task method if not Work
	Calls    bool   // Panics counts a loop's body calls (ForRange, Do, RunContext...), not copies
}

// Error returns the value, where it happened and the stack.
func (p *PanicError) Error() string { return (*gang.PanicError)(p).Error() }

// Unwrap returns Value if it is an error.
func (p *PanicError) Unwrap() error { return (*gang.PanicError)(p).Unwrap() }

// repanic raises gang's report as the set's *PanicError (same struct).
func repanic(p *gang.PanicError) {
	if p != nil {
		panic((*PanicError)(p))
	}
}

// asSetPanic, deferred around gang calls that may raise gang's report (a
// caller copy's Goexit giving way to another's panic), converts it.
func asSetPanic() {
	if v := recover(); v != nil {
		if p, ok := v.(*gang.PanicError); ok {
			v = (*PanicError)(p)
		}
		panic(v)
	}
}

// Workers is a named set of persistent worker goroutines, made by New,
// Acquire or Default. Every method of a zero Workers or a nil *Workers panics,
// saying which. All methods are safe for concurrent use. It must not be copied.
type Workers struct {
	// mu serializes runs (inline ones included) and Close; its word is the
	// holder's token, read by the nested-run and cycle checks.
	mu runLock

	// Counters for Stats, atomic because runs that do not hold mu add to
	// them too; runs and callerCopies share mu's line, the holder's anyway.
	runs         atomic.Uint64
	callerCopies atomic.Uint64 // of runs that are not inline
	// Inline runs as they end (endAlone): returned or panicked, concurrent
	// (inlineRuns) or under mu (inlineHeld); or by Goexit (inlineExits).
	inlineRuns, inlineHeld, inlineExits atomic.Uint64
	waits, waitNanos                    atomic.Uint64 // runs that waited for mu, and how long
	busyRuns                            atomic.Uint64 // runs that found mu held (concurrent runs)
	cappedLoops, callerOnly             atomic.Uint64 // see Stats

	crew atomic.Pointer[crew] // replaced by grow under mu and createMu: fixed for a run

	name       string
	place      placement
	spin       time.Duration // WithSpin, for every crew's dispatcher
	concurrent bool          // WithConcurrentRuns
	acquired   bool          // from Acquire: only its last release closes it
	active     atomic.Int32  // Run's copy count

	// createMu guards worker creation, closing, placementErrs and retired;
	// created (the crew's workers) is written under it.
	createMu      sync.Mutex
	created       atomic.Int32
	started       atomic.Int32 // every worker goroutine ever started
	closed        atomic.Bool
	placementErrs []error
	retired       gang.WorkerStats // counters of the crews grow replaced

	wg   sync.WaitGroup           // every worker goroutine
	team atomic.Pointer[teamTask] // kept between runs (see RunTeam)
}

// crew is a set's dispatcher and its workers, sized for max.
type crew struct {
	d        *gang.Dispatcher
	max      int
	workers  []atomic.Pointer[worker] // stored once created, read without a lock
	retiring atomic.Bool              // set by grow: ensureCreated waits for the next crew
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

// worker is one worker goroutine's identity; its counters are in gang.
type worker struct {
	g      atomic.Uint64 // the goroutine's token while alive, else 0
	placed chan struct{} // closed once placed (nil without placement): see ensureCreated
}

// New returns a set named name of at most maxWorkers workers. It panics if
// maxWorkers is outside [1, tasks.MaxCopies] or an option is invalid.
func New(name string, maxWorkers int, opts ...Option) *Workers {
	return newSet(name, maxWorkers, newConfig("New", name, maxWorkers, opts))
}

func newSet(name string, maxWorkers int, c config) *Workers {
	w := &Workers{name: name, place: c.place, spin: c.spin, concurrent: c.concurrent, acquired: c.acquired}
	w.crew.Store(newCrew(maxWorkers, c.spin))
	w.active.Store(int32(c.active))
	register(w) // for the cycle check; Close unregisters
	return w
}

// check panics, naming op, unless w was made by New or Acquire and is open.
func (w *Workers) check(op string) {
	if w == nil || w.crew.Load() == nil || w.closed.Load() {
		w.panicUnusable(op)
	}
}

// stillOpen panics naming op if the set was closed since the caller's check
// (one load on the run path; the rest was checked).
func (w *Workers) stillOpen(op string) {
	if w.closed.Load() {
		w.panicClosed(op)
	}
}

// made returns w, or panics naming op unless w was made (closed or not).
func (w *Workers) made(op string) *Workers {
	if w == nil || w.crew.Load() == nil {
		w.panicUnusable(op)
	}
	return w
}

//go:noinline
func (w *Workers) panicUnusable(op string) {
	switch {
	case w == nil:
		panic(fmt.Sprintf("workers: %s on a nil *Workers: make a set with New or Acquire", op))
	case w.crew.Load() == nil:
		panic(fmt.Sprintf("workers: %s on a zero Workers: make a set with New or Acquire", op))
	}
	w.panicClosed(op)
}

func (w *Workers) panicClosed(op string) {
	panic(fmt.Sprintf("workers: %s on %q: set is closed", op, w.name))
}

// Name returns the set's name.
func (w *Workers) Name() string { return w.made("Name").name }

// MaxWorkers returns the most workers the set may create.
func (w *Workers) MaxWorkers() int { return w.made("MaxWorkers").crew.Load().max }

// ActiveWorkers returns the number of copies Run runs.
func (w *Workers) ActiveWorkers() int { return int(w.made("ActiveWorkers").active.Load()) }

// CreatedWorkers returns the number of workers the set has: started when
// first needed, kept until Close, never fewer than before.
func (w *Workers) CreatedWorkers() int { return int(w.made("CreatedWorkers").created.Load()) }

// SetActiveWorkers sets the copies Run runs, creates the workers it needs,
// and returns n. It panics if n is outside [1, MaxWorkers] or the set is closed.
func (w *Workers) SetActiveWorkers(n int) int {
	w.check("SetActiveWorkers")
	w.checkN("SetActiveWorkers", n)
	w.ensureCreated("SetActiveWorkers", n)
	w.active.Store(int32(n))
	return n
}

// Run is RunN(t, ActiveWorkers()).
func (w *Workers) Run(t tasks.Task) { w.runN("Run", t, int(w.made("Run").active.Load())) }

// RunN runs n copies of t, ids 0..n-1, on the workers and returns when all have
// returned: every copy's return is synchronized before RunN's. If t opts in to
// caller-runs (tasks.CallerRuns), the caller runs copy n-1, any copy no worker
// has started, and a single copy inline. The set keeps no reference to t. With
// runtime/trace on, the run and each copy are regions named after t. With n = 0
// it runs nothing, calls no method of t and counts nothing in Stats.
//
// If copies panic (or call runtime.Goexit on a worker), the others still run,
// then RunN panics with a *PanicError for the first. It also panics if t is nil,
// n is outside [0, MaxWorkers], the set is closed, or the run waits for itself.
func (w *Workers) RunN(t tasks.Task, n int) { w.runN("RunN", t, n) }

// RunTeam runs n copies of fn as a team, each on a worker of its own with a
// *team.Member of id 0..n-1 (Barrier, For), and returns when all returned.
// It waits for the set, returns at once for n = 0 and panics as RunN does
// for a plain task; a member's panic breaks the barrier.
func (w *Workers) RunTeam(name string, n int, fn func(m *team.Member)) {
	w.check("RunTeam")
	if fn == nil {
		panic(fmt.Sprintf("workers: RunTeam on %q: nil function", w.name))
	}
	if n == 0 {
		return
	}
	w.checkN("RunTeam", n)
	// One cached task per set, taken by a Swap (concurrent RunTeams never
	// share it) and put back after the run (not a panic): the run's end
	// precedes the Store the next Swap reads, so it finds a finished team.
	c := w.team.Swap(nil)
	if c == nil {
		c = &teamTask{t: team.New(n)}
	} else {
		c.t.Reset(n)
	}
	c.name, c.fn = name, fn
	w.runN("RunTeam", c, n)
	c.name, c.fn = "", nil // keep neither fn nor what it captures alive
	w.team.Store(c)
}

// teamTask is a plain task, copy id running member id, that the set keeps
// between RunTeams so a run allocates nothing.
type teamTask struct {
	name string
	t    *team.Team
	fn   func(m *team.Member)
}

func (t *teamTask) Name() string { return t.name }
func (t *teamTask) Work(id int)  { t.t.Run(id, t.fn) }

func (w *Workers) runN(op string, t tasks.Task, n int) {
	w.check(op)
	if t == nil {
		panic(fmt.Sprintf("workers: %s on %q: nil task", op, w.name))
	}
	if n == 0 {
		return
	}
	w.checkN(op, n)
	plan, pe := gang.Prepare(t)
	repanic(pe)
	if name := plan.Name(); name != "" {
		w.runTraced(op, plan, n, name) // a frame of its own: no defer on the common path
		return
	}
	w.runPlan(op, plan, n)
}

func (w *Workers) runTraced(op string, plan gang.Plan, n int, name string) {
	defer trace.StartRegion(context.Background(), name).End()
	w.runPlan(op, plan, n)
}

// runPlan runs plan: a plain run waits for the set, a caller-runs one of one
// copy runs inline, and one that finds a concurrent set busy on its caller.
func (w *Workers) runPlan(op string, plan gang.Plan, n int) {
	callerRuns := plan.CallerRuns()
	switch {
	case callerRuns && n == 1:
		w.runInline(op, plan)
		return
	case callerRuns && w.concurrent:
		if !w.mu.tryLock(token(true)) {
			w.runBusy(op, plan, n)
			return
		}
	default:
		_ = w.lockContext(context.Background(), op, callerRuns) // never done: always gets the lock
	}
	defer w.mu.unlock()
	repanic(w.runHeld(op, plan, n))
}

// runHeld runs plan on the dispatcher under the run lock, which its caller
// releases; it creates the workers the run needs, under the lock.
func (w *Workers) runHeld(op string, plan gang.Plan, n int) *gang.PanicError {
	need := n
	if plan.CallerRuns() {
		defer asSetPanic()
		need-- // the caller runs copy n-1
	}
	w.stillOpen(op)
	if int(w.created.Load()) < need {
		w.ensureCreated(op, need)
	}
	w.runs.Add(1)
	ran, p := w.crew.Load().d.Run(plan, n) // the holder's crew: grow needs the lock
	if ran > 0 {
		w.callerCopies.Add(uint64(ran))
		if ran == n {
			w.callerOnly.Add(1)
			if trace.IsEnabled() {
				trace.Log(context.Background(), "workgang", "the caller ran every copy before a worker claimed one")
			}
		}
	}
	return p
}

// runInline runs a run of one caller-runs copy on its caller, holding the run
// lock unless the set has concurrent runs (runs share the ids users key data by).
func (w *Workers) runInline(op string, plan gang.Plan) {
	held := !w.concurrent
	if held {
		_ = w.lockContext(context.Background(), op, true)
		defer w.mu.unlock() // after endAlone, which writes inlineHeld as its holder
	}
	w.stillOpen(op)
	ran := false
	defer w.endAlone(held, false, &ran)
	p := gang.RunOnCaller(plan, 1) // returns after a panic too
	ran = true
	repanic(p)
}

// runBusy runs the n copies of a caller-runs task that found the run lock
// taken (by another run, Close, or the run it is nested in) on its caller,
// holding nothing, so Close and a last release never wait for it.
func (w *Workers) runBusy(op string, plan gang.Plan, n int) {
	w.stillOpen(op)
	w.runs.Add(1)
	w.busyRuns.Add(1)
	defer asSetPanic()
	p := gang.RunOnCaller(plan, n) // returns after panics too: only a Goexit skips the rest
	w.callerCopies.Add(uint64(n))
	repanic(p)
}

// runAlone runs a loop's one copy on its caller, under the run lock if held
// (runLoop releases it); busy: the loop found the set busy.
func (w *Workers) runAlone(t loopTask, held, busy bool) {
	if busy {
		w.runs.Add(1)
		w.busyRuns.Add(1)
	}
	ran := false
	defer w.endAlone(held, busy, &ran)
	if trace.IsEnabled() {
		defer trace.StartRegion(context.Background(), t.Name()).End()
		why := "one copy planned: on the caller"
		if busy {
			why = "the set was busy: on the caller, as one copy"
		}
		trace.Log(context.Background(), "workgang", why)
	}
	t.Work(0)
	ran = true
}

// endAlone counts a run on the caller alone as it ends (*ran: its copy
// returned or panicked, else it called Goexit); held: under the run lock,
// released after. inlineHeld's one writer is the lock's holder (the lock's
// CAS orders successive holders): a load and a store suffice.
func (w *Workers) endAlone(held, busy bool, ran *bool) {
	switch {
	case busy:
		if *ran {
			w.callerCopies.Add(1)
		}
	case !*ran:
		w.inlineExits.Add(1)
	case held:
		w.inlineHeld.Store(w.inlineHeld.Load() + 1)
	default:
		w.inlineRuns.Add(1)
	}
}

// token is the run lock's record of its holder. One that runs user code must
// be identified (to tell a nested run from a concurrent one); plain runs'
// holders are only where goid.Get is cheap, else cycles through them hang.
func token(runsUserCode bool) uint64 {
	if runsUserCode || goid.Fast {
		return goid.Get()
	}
	return anonToken
}

// Close waits for the run in progress (not for busy runs), stops the workers
// and waits for them to exit; later runs panic, a second Close does nothing.
// It panics inside a copy of the set's run, and on Acquire's and Default's sets.
func (w *Workers) Close() {
	if w.made("Close").acquired {
		panic(fmt.Sprintf("workers: Close on %q: a shared set is closed by its last release (the function Acquire returned; Default's set never), not by Close", w.name))
	}
	w.close()
}

func (w *Workers) close() {
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

// lockContext takes the run lock, or returns ctx's cause (see waitLock).
func (w *Workers) lockContext(ctx context.Context, op string, runsUserCode bool) error {
	if w.mu.tryLock(token(runsUserCode)) {
		return nil
	}
	return w.lockSlow(ctx, op, runsUserCode)
}

// lockSlow panics on a nested run of the same set, else waits its turn.
func (w *Workers) lockSlow(ctx context.Context, op string, runsUserCode bool) error {
	g := goid.Get()
	if w.mu.owner() == g {
		panic(fmt.Sprintf("workers: %s on %q called from inside a copy of a task that this goroutine is running on the same set; %s", op, w.name, selfWait(op)))
	}
	if slices.Contains(w.runGoroutines(), g) { // not the holder: a worker
		panic(fmt.Sprintf("workers: %s on %q called from inside a copy running on a worker of the same set; %s", op, w.name, selfWait(op)))
	}
	nested := insideAnyRun(g) // only a goroutine inside some run can close a cycle
	return w.waitLock(op, g, token(runsUserCode), nested, ctx)
}

// selfWait says why op, called from inside a copy of the set's run, panics.
func selfWait(op string) string {
	switch op {
	case "Close":
		return "Close waits for the run in progress, which would never end; close the set after the run"
	case "Acquire":
		return "raising MaxWorkers waits for the run in progress, which would never end; acquire the larger set after the run"
	}
	return "a nested run would deadlock"
}

// checkN panics unless n is in [1, MaxWorkers] (runs return before for 0).
func (w *Workers) checkN(op string, n int) {
	if n < 1 || n > w.MaxWorkers() {
		w.panicN(op, n)
	}
}

//go:noinline
func (w *Workers) panicN(op string, n int) {
	hint, lo := "", 0 // a run of 0 copies returns
	if op == "SetActiveWorkers" {
		lo = 1
	}
	if n > w.MaxWorkers() && op == "RunN" {
		hint = "; for more copies than workers use RunContext (any n) or ForRange"
	}
	panic(fmt.Sprintf("workers: %s on %q: n = %d out of range [%d, %d]%s", op, w.name, n, lo, w.MaxWorkers(), hint))
}

// ensureCreated starts workers until at least n exist, and waits until the
// new ones are placed, so PlacementErrors is complete once a run returns.
func (w *Workers) ensureCreated(op string, n int) {
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
	var placed []*worker
	for i := int(w.created.Load()); i < min(n, c.max); i++ {
		wk := &worker{}
		if w.place.lockThread {
			wk.placed = make(chan struct{})
			placed = append(placed, wk)
		}
		c.workers[i].Store(wk)
		w.wg.Add(1)
		w.started.Add(1)
		go w.work(c.d, i, wk, true)
		// After the go statement: "created >= n" means n goroutines serve.
		w.created.Store(int32(i + 1))
	}
	w.createMu.Unlock()
	for _, wk := range placed { // outside createMu: recordPlacement takes it
		<-wk.placed
	}
}

// work is worker goroutine i of dispatcher d: place and label it, then serve
// until stopped. first is false for a replacement after a Goexit.
func (w *Workers) work(d *gang.Dispatcher, i int, wk *worker, first bool) {
	var restore func() []error
	if w.place.lockThread {
		runtime.LockOSThread() // for good: the thread ends with the goroutine
		var errs []error
		restore, errs = applyPlacement(&w.place, i)
		w.recordPlacement(i, errs)
	}
	if first && wk.placed != nil {
		close(wk.placed)
	}
	// The set's labels only, not those of the goroutine that started it.
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(),
		pprof.Labels("workgang.set", w.name, "workgang.worker", strconv.Itoa(i))))
	wk.g.Store(goid.Get())
	stopped := false
	defer func() {
		wk.g.Store(0)
		if restore != nil { // before Done: Close returns with them restored
			w.recordPlacement(i, restore())
		}
		if !stopped { // a copy's Goexit: replace it before Done, so Close waits
			w.wg.Add(1)
			w.started.Add(1)
			go w.work(d, i, wk, false)
		}
		w.wg.Done()
	}()
	d.Serve(i)
	stopped = true
}

// grow raises MaxWorkers to max (Acquire), under the run lock so no run uses
// the old crew: its workers stop and a crew of max slots with as many
// workers replaces it. ActiveWorkers follows if it was MaxWorkers.
func (w *Workers) grow(op string, max int) {
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
	w.ensureCreated(op, k) // still under the run lock: no run sees fewer
}

func (w *Workers) recordPlacement(i int, errs []error) {
	if len(errs) == 0 {
		return
	}
	w.createMu.Lock()
	defer w.createMu.Unlock()
	for _, err := range errs {
		w.placementErrs = append(w.placementErrs, fmt.Errorf("workers: %q worker %d: %w", w.name, i, err))
	}
}

// PlacementErrors returns the placement failures so far (those run unplaced).
func (w *Workers) PlacementErrors() []error {
	w.made("PlacementErrors").createMu.Lock()
	defer w.createMu.Unlock()
	return append([]error(nil), w.placementErrs...)
}

// Stats is a snapshot of a set's counters since New, each read atomically;
// no counter goes down. Runs and worker copies are counted as they start,
// inline runs, caller copies and waits as they end. With runtime/trace on,
// a run whose copies all ran on its caller logs why (category "workgang").
type Stats struct {
	Runs           uint64 // every run and loop
	InlineRuns     uint64 // runs and loops of one copy that ran on the caller, not busy
	BusyRuns       uint64 // runs that found the set busy and ran on their caller
	CallerOnlyRuns uint64 // runs offered to workers whose caller ran every copy
	CappedLoops    uint64 // loops run on the set whose copies were cut to GOMAXPROCS (busy loops run one copy: not counted)
	CallerCopies   uint64 // copies run by the runs' callers
	WorkerCopies   uint64 // copies run by workers

	// How workers found the runs they looked at.
	Ready   uint64 // posted before the worker looked
	Spun    uint64 // posted while the worker spun
	Parks   uint64 // the worker parked
	Wakeups uint64 // a parked worker was woken

	Created           int // worker goroutines started: those of crews a grow replaced and replacements after a runtime.Goexit included
	PlacementFailures int // see PlacementErrors

	Waits    uint64        // runs that queued for the set, those that gave up on a done context included (Close and Acquire's grow are not runs)
	WaitTime time.Duration // their total time in the queue
}

// Stats returns the set's counters.
func (w *Workers) Stats() Stats {
	w.made("Stats")
	ended := w.inlineRuns.Load() + w.inlineHeld.Load()
	inline := ended + w.inlineExits.Load()
	s := Stats{
		Runs:           w.runs.Load() + inline,
		InlineRuns:     inline,
		BusyRuns:       w.busyRuns.Load(),
		CallerOnlyRuns: w.callerOnly.Load(),
		CappedLoops:    w.cappedLoops.Load(),
		CallerCopies:   w.callerCopies.Load() + ended,
		Created:        int(w.started.Load()),
		Waits:          w.waits.Load(),
		WaitTime:       time.Duration(w.waitNanos.Load()),
	}
	w.createMu.Lock() // the crew and the retired counters, as grow leaves them
	sum := w.retired
	w.crew.Load().addWorkerStats(&sum, int(w.created.Load()))
	s.PlacementFailures = len(w.placementErrs)
	w.createMu.Unlock()
	s.WorkerCopies, s.Ready, s.Spun, s.Parks, s.Wakeups = sum.Copies, sum.Ready, sum.Spun, sum.Parks, sum.Wakeups
	return s
}

// String formats the snapshot as one log line.
func (s Stats) String() string {
	return fmt.Sprintf("runs=%d inline=%d busy=%d caller_only=%d capped=%d caller_copies=%d worker_copies=%d ready=%d spun=%d parks=%d wakeups=%d created=%d placement_failures=%d waits=%d wait_time=%v",
		s.Runs, s.InlineRuns, s.BusyRuns, s.CallerOnlyRuns, s.CappedLoops, s.CallerCopies, s.WorkerCopies, s.Ready, s.Spun, s.Parks, s.Wakeups, s.Created, s.PlacementFailures, s.Waits, s.WaitTime)
}
