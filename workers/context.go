package workers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
// Allocations: RunContext allocates only for the derived context
// (context.WithCancelCause); its task comes from a pool. With a parent that
// is never cancelled, such as context.Background, that is 2 allocations per
// call, 3 if a copy calls ctx.Done (the channel); a cancellable parent may add
// its bookkeeping (TestContextAllocations pins these counts). Run, RunN and
// ForRange stay at 0. It panics if ctx or fn is nil, n < 1, or in the cases
// where RunN panics.
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
	t := runCtxPool.Get().(*runCtxTask)
	t.fn = fn
	copies := t.reset(n, w.MaxWorkers())
	cancel := t.start(ctx)
	// Deferred (open-coded: no allocation) so that a panicking run still
	// detaches the derived context from ctx, and names the id that panicked.
	defer t.exit(cancel, copies < n)
	// Like w.RunN(t, copies), but giving up (running nothing) if ctx is
	// done while the run waits for the set.
	waitErr := w.runNContext(ctx, "RunN", t, copies)
	err := t.finish()
	t.fn = nil
	runCtxPool.Put(t) // after RunN returned, no copy touches t any more
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
// Allocations are those of RunContext with ctx.Done called: 3 per call with
// context.Background (the task comes from a pool; a ctx already done costs
// none). It panics where ForRange panics, and if ctx is nil.
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
	t := rangeCtxPool.Get().(*rangeCtxTask)
	copies := t.loop.reset(n, r)
	t.body = body
	t.callerRuns = r.callerRuns
	cancel := t.start(ctx)
	defer cancel(nil) // as in RunContext
	// As in RunContext: a run whose ctx is done while it waits for the
	// set claims no chunk, and the loop below reports ctx's cause.
	waitErr := w.runNContext(ctx, "RunN", t, copies)
	err := t.finish()
	if waitErr != nil {
		err = waitErr
	} else if err == nil && t.loop.claimed() < n {
		// Copies stop early without an error only when the derived
		// context is done, and only ctx being done cancels it then (a
		// panic would have made RunN panic).
		err = cause(ctx)
	}
	t.body = nil
	rangeCtxPool.Put(t)
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

// errRun is the state a run with a context shares among its copies: the
// derived context and the first error.
type errRun struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	err    error // the first error a copy returned; guarded by mu
}

// start derives the run's context from parent; it returns the cancel
// function for the caller to defer.
func (r *errRun) start(parent context.Context) context.CancelCauseFunc {
	r.ctx, r.cancel = context.WithCancelCause(parent)
	return r.cancel
}

// fail records err if it is the run's first error and cancels the run's
// context with it as the cause. The mutex orders the first error before the
// cancel, so no copy can see a context cancelled by a later error, and
// RunN's return orders every fail before finish.
func (r *errRun) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
		r.cancel(err)
	}
	r.mu.Unlock()
}

// finish cancels the run's context (it is over), returns the first error and
// clears the state for the pool. It runs after RunN returned, so no copy is
// running.
func (r *errRun) finish() error {
	r.cancel(nil)
	err := r.err
	r.ctx, r.cancel, r.err = nil, nil, nil
	return err
}

// guard is deferred by every copy: a copy that does not return normally
// (panic, Goexit) cancels the others' context so they can stop early.
func (r *errRun) guard(returned *bool) {
	if !*returned {
		r.cancel(errCopyPanicked)
	}
}

var runCtxPool = sync.Pool{New: func() any { return new(runCtxTask) }}

// runCtxTask is the task RunContext runs. It always lets the caller run
// copies (see RunContext). With n ids on k < n copies, copy c runs id c,
// then ids k, k+1, ... from the shared counter until they are all taken.
type runCtxTask struct {
	errRun
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

// exit is deferred by RunContext: it detaches the derived context and, if
// RunN is panicking with a copy's *PanicError and ids are not copies
// (claimed, so t.cur is in use), puts the id of the work that panicked in it
// in place of the copy's slot. It reads t only while a panic unwinds, when
// RunContext did not put t back in the pool.
func (t *runCtxTask) exit(cancel context.CancelCauseFunc, claimed bool) {
	cancel(nil)
	if !claimed {
		return
	}
	v := recover()
	if v == nil {
		return // no panic (or a Goexit, which goes on)
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
	defer t.guard(&returned)
	id := copy
	for {
		if t.k < t.n {
			t.cur[copy] = id
		}
		if err := t.fn(t.ctx, id); err != nil {
			t.fail(err)
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
	errRun
	loop       rangeLoop
	body       func(ctx context.Context, worker, lo, hi int) error
	callerRuns bool
}

func (t *rangeCtxTask) Name() string       { return "workers.ForRangeContext" }
func (t *rangeCtxTask) CallerCanRun() bool { return t.callerRuns }

func (t *rangeCtxTask) Work(worker int) {
	returned := false
	defer t.guard(&returned)
	done := t.ctx.Done()
	for {
		// A non-blocking receive is a lock-free check of an open channel,
		// unlike ctx.Err, which may take the context's mutex on every
		// chunk. A receive that sees the channel closed is synchronized
		// after the cancel that closed it.
		select {
		case <-done:
			returned = true
			return
		default:
		}
		lo, hi, ok := t.loop.next()
		if !ok {
			break
		}
		if err := t.body(t.ctx, worker, lo, hi); err != nil {
			t.fail(err)
			break
		}
	}
	returned = true
}
