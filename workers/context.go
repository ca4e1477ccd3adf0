package workers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errCopyPanicked is the cause with which a run's context is cancelled when
// one of its copies panics (or calls runtime.Goexit), so the other copies can
// stop early; the panic itself reaches the caller as a *PanicError.
var errCopyPanicked = errors.New("workers: a copy of the run panicked")

// RunContext runs n copies of fn, with ids 0..n-1, each once, and returns
// when all have returned, the way errgroup.Group runs functions: every copy
// gets a context derived from ctx that is cancelled as soon as a copy returns
// a non-nil error (its context.Cause is then that error) or ctx is done, and
// RunContext returns the first non-nil error a copy returned, or nil. Like
// errgroup, it returns nil if ctx was cancelled but every copy still returned
// nil; a copy that wants to report the cancellation returns ctx.Err(). The
// derived context is cancelled when RunContext returns.
//
// n may be any number >= 1. At most min(n, MaxWorkers) copies run at a time:
// up to MaxWorkers-1 workers and the caller, each taking the next id not yet
// started when it finishes one, so with n > MaxWorkers an id names a copy of
// the work, not a goroutine. Every id runs even after the context is
// cancelled (the copy sees a done context), as errgroup runs every function.
//
// RunContext is for CPU-bound copies. The calling goroutine runs copies too,
// as for a caller-runs task (see tasks.CallerRuns): it would otherwise sit
// idle until the copies finish, and running one itself saves a hand-off; with
// n == 1, fn runs inline and no worker is woken. But it also runs every copy
// no worker has started yet, one after another, so copies that block (on the
// network, a lock, a sleep) start late when workers are slow to start, as
// they are when other goroutines keep the processors busy; and at most
// MaxWorkers of them wait at a time, so on a set smaller than n they wait in
// turns. BenchmarkRunContextBlocking measures that case (8 copies that each
// sleep, with and without two CPU-burning goroutines, on sets of 8 and of
// GOMAXPROCS, against a goroutine per copy): a set of 8 matches a goroutine
// per copy on an idle machine; beside the burners it is slower, because its
// idle workers spin for processor time the finishing copies need, unless the
// set is made WithSpin(0) (idle workers park at once), which brings it back
// to a goroutine per copy; a set of GOMAXPROCS is several times slower, since
// it runs the copies in turns. For work that blocks, start a goroutine per
// call (errgroup), or give it a set of its own with WithSpin(0) and at least
// n workers; use RunN with a task of your own to keep every copy on the
// workers (for instance on placed threads).
//
// If the set is busy with another run, RunContext waits its turn; if ctx is
// done while it waits, it returns context.Cause(ctx) at once, having run
// nothing (Stats counts the wait). Copies are started even when ctx is already
// done and the set is free; they see a done context.
// Memory model, nested runs and panics are as for RunN: a copy's panic (or
// Goexit on a worker) cancels the others' context with a cause of its own,
// and once every copy has returned, RunContext panics with the *PanicError,
// whose Worker is the id that panicked. After a panic, ids not yet started
// run only if a copy is left to take them. On a set made WithConcurrentRuns
// that another run holds, every copy runs on the caller (see RunN).
//
// The copies' context is the run's own, made for each call: once RunContext
// has returned it stays done, like a cancelled standard context, with
// context.Canceled (or the parent's Err if the parent was done first) and the
// cause a copy's error gave it, for as long as anyone keeps it; the set keeps
// nothing of the run (fn, the context, the errors). Deriving from it starts
// no goroutine (it has the AfterFunc method that the context package looks
// for). Its Err costs an atomic load and the parent's Err, allocates nothing
// and sees the parent's cancellation at once: prefer it to Done in loops.
//
// Allocations: one per call, the copies' context, whatever n, the parent and
// the copies' errors (the task that carries the run is kept by the set, or
// taken from a pool by concurrent calls). Done makes its channel on its
// first call, and with a parent that can be done also the watch of the parent
// (context.AfterFunc); asking for the cause of a copy's error
// (context.Cause, or deriving a context once the run is cancelled) makes a
// context that holds it, a few objects. TestContextAllocations pins these
// counts. It panics if ctx or fn is nil,
// n < 1, or in the cases where RunN panics.
func (w *set) RunContext(ctx context.Context, n int, fn func(ctx context.Context, worker int) error) error {
	if ctx == nil {
		panic(fmt.Sprintf("workers: RunContext on %q: nil context", w.Name()))
	}
	if fn == nil {
		panic(fmt.Sprintf("workers: RunContext on %q: nil function", w.Name()))
	}
	if n < 1 {
		panic(fmt.Sprintf("workers: RunContext on %q: n = %d, want >= 1", w.Name(), n))
	}
	t := takeTask(&w.ctxTasks.run, &runCtxPool)
	t.fn = fn
	copies := t.reset(n, w.MaxWorkers())
	t.run = newCtxRun(ctx)
	// Deferred (open-coded: no allocation) so that a panicking run still
	// ends the copies' context and names the id that panicked; it reads t
	// only then, since a run that returns hands t back to the set first.
	returned := false
	defer t.exit(&returned, copies < n)
	// Like w.RunN(t, copies), but giving up (running nothing) if ctx is
	// done while the run waits for the set.
	waitErr := w.runNContext(ctx, "RunN", t, copies)
	err := t.run.end()
	t.fn, t.run = nil, nil
	returned = true
	putTask(&w.ctxTasks.run, &runCtxPool, t) // after RunN returned, no copy touches t any more
	if waitErr != nil {
		return waitErr
	}
	return err
}

// ForRangeContext is ForRange with a context and errors: it runs body over
// [0, n) in chunks as ForRange does, with the same options and the same
// default (the caller runs copies too; it is for CPU-bound bodies, see
// RunContext on blocking ones), but copies stop claiming chunks once ctx is
// done or a body call returned an error. Each body
// call gets a context derived from ctx, cancelled (with the error as its
// cause) as soon as a body call fails. A body call already running is not
// interrupted: cancellation is seen between chunks, so a smaller WithChunk
// stops a loop sooner.
//
// It returns the first non-nil error a body call returned; otherwise, if ctx
// was done before every chunk was handed out, context.Cause(ctx) (which is
// ctx.Err() unless ctx was cancelled with a cause); otherwise nil: a loop that
// ran every iteration returns nil even if ctx is done by then. If ctx is done
// when ForRangeContext is called, or becomes done while the loop waits for a
// busy set, it runs nothing and returns context.Cause(ctx) at once.
//
// The body's context is the run's own as in RunContext, and allocations are
// those of RunContext: one per call (copies look at the run's Err between
// chunks, not at Done). It panics where ForRange panics,
// and if ctx is nil.
func (w *set) ForRangeContext(ctx context.Context, n int, body func(ctx context.Context, worker, lo, hi int) error, opts ...RangeOption) error {
	if ctx == nil {
		panic(fmt.Sprintf("workers: ForRangeContext on %q: nil context", w.Name()))
	}
	r := w.rangeSetup("ForRangeContext", n, body != nil, opts)
	if n == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return cause(ctx)
	}
	t := takeTask(&w.ctxTasks.rng, &rangeCtxPool)
	copies := t.loop.reset(n, r)
	t.body = body
	t.callerRuns = r.callerRuns
	t.run = newCtxRun(ctx)
	returned := false
	defer t.exit(&returned) // as in RunContext
	// As in RunContext: a run whose ctx is done while it waits for the
	// set claims no chunk, and the loop below reports ctx's cause.
	waitErr := w.runNContext(ctx, "RunN", t, copies)
	err := t.run.end()
	if waitErr != nil {
		err = waitErr
	} else if err == nil && t.loop.claimed() < n {
		// Copies stop early without an error only when the run's context
		// is done, and only ctx being done makes it so then (a panic
		// would have made RunN panic).
		err = cause(ctx)
	}
	t.body, t.run = nil, nil
	returned = true
	putTask(&w.ctxTasks.rng, &rangeCtxPool, t)
	return err
}

// cause is context.Cause(ctx), or ctx.Err() for a context whose Cause is nil
// although it is done (a custom Context implementation).
func cause(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// ctxTasks keeps a set's tasks with a context between runs, one of each
// kind, so that a set used by one goroutine at a time allocates only the
// copies' context in steady state and keeps its task across garbage
// collections (a sync.Pool is emptied by them); concurrent runs
// (WithConcurrentRuns) take the others from the package's pools. A kept task
// holds nothing of its last run but its buffers: the copies see the task
// only through the run's ctxRun, which is never reused.
type ctxTasks struct {
	run atomic.Pointer[runCtxTask]
	rng atomic.Pointer[rangeCtxTask]
}

// release hands the kept tasks of a closing set to the package's pools, so
// that the first RunContext of a set made later takes one (memory recently
// used, rather than a fresh object) instead of allocating. Close holds the
// run lock and the set is closed: no run of this set takes them again.
func (c *ctxTasks) release() {
	if t := c.run.Swap(nil); t != nil {
		runCtxPool.Put(t)
	}
	if t := c.rng.Swap(nil); t != nil {
		rangeCtxPool.Put(t)
	}
}

// takeTask takes the set's kept task from slot, or one from pool. The Swap
// gives the task to one caller only.
func takeTask[T any](slot *atomic.Pointer[T], pool *sync.Pool) *T {
	if t := slot.Swap(nil); t != nil {
		return t
	}
	return pool.Get().(*T)
}

// putTask keeps t in slot if it is empty, else puts it in pool. The caller's
// run is over: no copy of it touches t any more, and the CAS publishes t's
// reset state to the next caller that takes it.
func putTask[T any](slot *atomic.Pointer[T], pool *sync.Pool, t *T) {
	if !slot.CompareAndSwap(nil, t) {
		pool.Put(t)
	}
}

// ctxRun is the state a run with a context shares among its copies, and it
// is also the context the copies get: done once a copy fails (returns an
// error, panics, calls runtime.Goexit), the parent is done, or the run is
// over. Each run makes one (a context must never come back to life for
// whoever kept it), which is its only allocation unless a copy asks for more
// than Err:
//
//   - The parent is not watched: Err looks at the parent's Err when the run
//     is not done yet, and makes the run done if the parent is. Only Done,
//     whose channel must close by itself, makes a channel and, if the parent
//     can be done at all, watches it (context.AfterFunc); so does AfterFunc
//     (the method, which contexts derived from this one register with).
//   - context.Cause finds a cause only through a *context.cancelCtx that
//     Value returns for the package's private key (cancelKey). So Value on
//     a run cancelled by a copy's error answers that key with a cancelled
//     context.WithCancelCause whose cause is that error, made on the first
//     such Value (a run whose copies never ask for the cause makes none); a
//     run cancelled by its parent leaves Value to the parent, whose cause
//     Cause then finds.
//
// Ordering: state goes from live (0) to done (1) once per run, under mu, after
// err and cause are written and before done's channel is closed; every
// reader loads state first (an atomic load that sees 1 is synchronized after
// the Store), so it sees err and cause. Err and Value read parent without mu:
// newCtxRun writes it before the run is dispatched, which is synchronized
// before every copy starts, and nothing writes it again.
type ctxRun struct {
	parent context.Context
	state  atomic.Uint32
	// done points at ch once Done made it (ch is written first, under mu,
	// so a Load that sees the pointer sees the channel).
	done atomic.Pointer[chan struct{}]

	mu     sync.Mutex
	ch     chan struct{}
	err    error // Err's value once done
	failed error // the cause, when a copy's failure made the run done
	// cause is the context Value answers cancelKey with once failed is
	// set, made on demand (see causeCtx); an atomic, as Value loads it
	// without mu.
	cause atomic.Pointer[causeCtx]
	first error // the first error a copy returned
	stop  func() bool
	// afters are the functions AfterFunc registered and not yet stopped,
	// started when the run is done.
	afters map[*afterFunc]struct{}
}

// afterFunc is one function AfterFunc registered: state goes from pending
// (0) to started or stopped (1) once, by a CAS, so it starts at most once
// and stop reports truly whether it prevented that.
type afterFunc struct {
	f     func()
	state atomic.Uint32
}

func (a *afterFunc) start() {
	if a.state.CompareAndSwap(0, 1) {
		go a.f()
	}
}

// causeCtx is a cancelled context whose cause is err, for context.Cause.
type causeCtx struct {
	ctx context.Context
	err error
}

// closedChan is Done's channel for a run that was done before any copy
// asked for it.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// newCtxRun returns the live context of a run under parent. No copy runs
// yet, so plain writes suffice: the run's dispatch publishes them.
func newCtxRun(parent context.Context) *ctxRun { return &ctxRun{parent: parent} }

// end makes the run's context done (it is over), stops watching the parent
// and returns the first error. Every copy has returned. r stays what a
// standard cancelled context is (parent, Err, Cause) for whoever still holds
// it; the caller drops it.
func (r *ctxRun) end() (first error) {
	r.mu.Lock()
	r.cancelLocked(nil)
	first, stop := r.first, r.stop
	r.first, r.stop = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop() // outside mu: a watch firing now takes mu and finds r done
	}
	return first
}

// cancelLocked makes the run done unless it is already: with the parent's
// Err if the parent is done, else with cause if it is not nil (a copy
// failed), else with context.Canceled (the run is over). r.mu is held.
func (r *ctxRun) cancelLocked(cause error) {
	if r.state.Load() != 0 {
		return
	}
	if err := r.parent.Err(); err != nil {
		r.err = err // Cause finds the parent's cause through Value
	} else {
		r.err, r.failed = context.Canceled, cause
		if cause != nil && cancelKey == nil {
			r.cause.Store(r.causeFor(cause)) // Value cannot tell the key: make it now
		}
	}
	r.state.Store(1)
	if p := r.done.Load(); p != nil {
		close(*p)
	}
	for a := range r.afters {
		a.start()
	}
	r.afters = nil
}

// causeCtx returns the cancelled context whose cause is r.failed, making it
// if no Value made it yet. r.failed is set (the caller loaded state != 0
// first, see ctxRun).
func (r *ctxRun) causeCtx() *causeCtx {
	if c := r.cause.Load(); c != nil {
		return c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cause.Load()
	if c == nil {
		c = r.causeFor(r.failed)
		r.cause.Store(c)
	}
	return c
}

// cancelKey is the key context.Cause passes to Value to find a
// *context.cancelCtx (the package's private one), learnt once by asking
// Cause about a probe; nil if Cause asked no key of it, and then a run
// makes its cause context when a copy fails and Value asks it about every
// key (see ctxRun.Value).
var cancelKey = func() any {
	var p keyProbe
	_ = context.Cause(&p)
	return p.key
}()

// keyProbe is a done context that records the first key Value is asked.
type keyProbe struct{ key any }

func (*keyProbe) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*keyProbe) Done() <-chan struct{}       { return closedChan }
func (*keyProbe) Err() error                  { return context.Canceled }
func (p *keyProbe) Value(key any) any {
	if p.key == nil {
		p.key = key
	}
	return nil
}

// causeFor returns a new cancelled context whose cause is err. r.mu is held.
func (r *ctxRun) causeFor(err error) *causeCtx {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(err)
	return &causeCtx{ctx: ctx, err: err}
}

// fail records err if it is the run's first error and makes the run done
// with it as the cause. The mutex orders the first error before the cancel,
// so no copy can see a context cancelled by a later error, and RunN's return
// orders every fail before end.
func (r *ctxRun) fail(err error) {
	r.mu.Lock()
	if r.first == nil {
		r.first = err
		r.cancelLocked(err)
	}
	r.mu.Unlock()
}

// guard is deferred by every copy: a copy that does not return normally
// (panic, Goexit) cancels the others' context so they can stop early.
func (r *ctxRun) guard(returned *bool) {
	if !*returned {
		r.mu.Lock()
		r.cancelLocked(errCopyPanicked)
		r.mu.Unlock()
	}
}

// Deadline is the parent's.
func (r *ctxRun) Deadline() (deadline time.Time, ok bool) {
	if p := r.parent; p != nil {
		return p.Deadline()
	}
	return time.Time{}, false
}

// Done returns a channel closed when the run is done. The first call of a
// run makes it (and watches the parent if that can be done); later calls
// load it.
func (r *ctxRun) Done() <-chan struct{} {
	if p := r.done.Load(); p != nil {
		return *p
	}
	return r.makeDone()
}

func (r *ctxRun) makeDone() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.done.Load(); p != nil {
		return *p
	}
	if r.state.Load() == 0 && r.parent.Err() != nil {
		r.cancelLocked(nil)
	}
	if r.state.Load() != 0 {
		r.ch = closedChan
	} else {
		r.ch = make(chan struct{})
		r.watchLocked()
	}
	r.done.Store(&r.ch) // after writing ch (see ctxRun)
	return r.ch
}

// watchLocked starts watching the parent, if it can be done and is not
// watched yet, so that the run becomes done by itself when the parent is
// (Done's channel closes, AfterFunc's functions start). The watch runs in a
// goroutine of its own once the parent is done, and takes mu: it cannot run
// inside the caller's section. r.mu is held.
func (r *ctxRun) watchLocked() {
	if r.stop == nil && r.parent.Done() != nil {
		r.stop = context.AfterFunc(r.parent, r.parentDone)
	}
}

// AfterFunc arranges for f to run in a goroutine of its own once the run is
// done, as context.AfterFunc does for the standard contexts, which use it:
// a context derived from a copy's registers here instead of starting a
// goroutine to watch Done.
func (r *ctxRun) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	r.mu.Lock()
	if r.state.Load() == 0 && r.parent.Err() != nil {
		r.cancelLocked(nil)
	}
	if r.state.Load() != 0 {
		r.mu.Unlock()
		a.start()
	} else {
		if r.afters == nil {
			r.afters = make(map[*afterFunc]struct{})
		}
		r.afters[a] = struct{}{}
		r.watchLocked()
		r.mu.Unlock()
	}
	return func() bool {
		if !a.state.CompareAndSwap(0, 1) {
			return false // started, or stopped before
		}
		r.mu.Lock()
		delete(r.afters, a)
		r.mu.Unlock()
		return true
	}
}

// parentDone is the parent watch: it makes the run done with the parent's
// Err, unless the run is done already.
func (r *ctxRun) parentDone() {
	r.mu.Lock()
	r.cancelLocked(nil)
	r.mu.Unlock()
}

// Err returns nil while the run is live. If the parent is done but the run
// does not know it yet, it makes the run done first, so that Err and Done
// agree (Err is non-nil only once Done's channel is closed).
func (r *ctxRun) Err() error {
	if r.state.Load() == 0 {
		if r.parent.Err() == nil {
			return nil
		}
		r.mu.Lock()
		r.cancelLocked(nil)
		r.mu.Unlock()
	}
	return r.err
}

// Value answers cancelKey with the cause context once a copy's failure made
// the run done (making it on the first call), and leaves every other key,
// and that one otherwise, to the parent. (A key is compared with ==, which
// never panics against cancelKey's pointer type.) Without a known
// cancelKey, the cause context made at the failure is asked first: it
// answers only its package's key.
func (r *ctxRun) Value(key any) any {
	if r.state.Load() != 0 && r.failed != nil {
		if cancelKey != nil {
			if key == cancelKey {
				return r.causeCtx().ctx.Value(key)
			}
		} else if v := r.causeCtx().ctx.Value(key); v != nil {
			return v
		}
	}
	if p := r.parent; p != nil {
		return p.Value(key)
	}
	return nil
}

var runCtxPool = sync.Pool{New: func() any { return new(runCtxTask) }}

// runCtxTask is the task RunContext runs. It always lets the caller run
// copies (see RunContext). With n ids on k < n copies, copy c runs id c,
// then ids k, k+1, ... from the shared counter until they are all taken.
type runCtxTask struct {
	run  *ctxRun // the current run's, nil between runs
	fn   func(ctx context.Context, worker int) error
	n, k int
	// next counts the ids from k on that copies have taken: the Add is the
	// claim, so each id is returned to exactly one copy. It counts past
	// n-k by at most one failed claim per copy, far below overflow.
	next atomic.Uint64
	// cur[c] is the id copy c is running, for naming it in a panic; written
	// only by copy c, read after RunN returned (or panicked), which is
	// synchronized after every copy's return. Used only when k < n.
	cur []int
}

// reset prepares a run of n ids on a set of max workers and returns the
// number of copies to run.
func (t *runCtxTask) reset(n, max int) (copies int) {
	t.n, t.k = n, min(n, max)
	t.next.Store(0)
	if t.k < n {
		if cap(t.cur) < t.k {
			t.cur = make([]int, t.k)
		}
		t.cur = t.cur[:t.k]
	}
	return t.k
}

// exit is deferred by RunContext. If the run returned, it does nothing (t
// may already serve another run). Otherwise RunN is panicking (or the
// caller's copy called runtime.Goexit) after every copy returned: it ends
// the run's context (t is dropped) and, if ids are not copies (claimed,
// so t.cur is in use), puts the id of the work that panicked in the
// *PanicError in place of the copy's slot.
func (t *runCtxTask) exit(returned *bool, claimed bool) {
	if *returned {
		return
	}
	t.run.end()
	t.fn, t.run = nil, nil
	if !claimed {
		return
	}
	v := recover()
	if v == nil {
		return // a Goexit, which goes on
	}
	if pe, ok := v.(*PanicError); ok && pe.Worker >= 0 && pe.Worker < len(t.cur) {
		pe.Worker = t.cur[pe.Worker]
	}
	panic(v)
}

func (t *runCtxTask) Name() string       { return "workers.RunContext" }
func (t *runCtxTask) CallerCanRun() bool { return true }

func (t *runCtxTask) Work(copy int) {
	returned := false
	defer t.run.guard(&returned)
	id := copy
	for {
		if t.k < t.n {
			t.cur[copy] = id
		}
		if err := t.fn(t.run, id); err != nil {
			t.run.fail(err)
		}
		i := t.next.Add(1) - 1
		if i >= uint64(t.n-t.k) {
			break
		}
		id = t.k + int(i) // < n: no overflow
	}
	returned = true
}

var rangeCtxPool = sync.Pool{New: func() any { return new(rangeCtxTask) }}

// rangeCtxTask is the task ForRangeContext runs: copies drain loop until it
// is empty, the run's context is done, or a body call fails.
type rangeCtxTask struct {
	run        *ctxRun // the current run's, nil between runs
	loop       rangeLoop
	body       func(ctx context.Context, worker, lo, hi int) error
	callerRuns bool
}

// exit is deferred by ForRangeContext: as runCtxTask.exit, without ids to
// rename.
func (t *rangeCtxTask) exit(returned *bool) {
	if !*returned {
		t.run.end()
		t.body, t.run = nil, nil
	}
}

func (t *rangeCtxTask) Name() string       { return "workers.ForRangeContext" }
func (t *rangeCtxTask) CallerCanRun() bool { return t.callerRuns }

func (t *rangeCtxTask) Work(worker int) {
	returned := false
	defer t.run.guard(&returned)
	for {
		// Err is an atomic load while the run and its parent are live (and
		// the parent's Err, an atomic load too for the standard package's
		// contexts); one that sees the run done is synchronized after
		// whatever made it so (see ctxRun).
		if t.run.Err() != nil {
			break
		}
		lo, hi, ok := t.loop.next()
		if !ok {
			break
		}
		if err := t.body(t.run, worker, lo, hi); err != nil {
			t.run.fail(err)
			break
		}
	}
	returned = true
}
