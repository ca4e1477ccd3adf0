package workers

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"
)

// errCopyPanicked is the cause with which a run's context is cancelled when
// one of its copies panics (or calls runtime.Goexit), so the other copies can
// stop early; the panic itself reaches the caller as a *PanicError.
var errCopyPanicked = errors.New("workers: a copy of the run panicked")

// RunContext runs fn(ctx, i) for each i in [0, n) and returns when all have
// returned, as errgroup.Group runs functions: fn gets a context derived from
// ctx (context.WithCancelCause), cancelled once a call returns an error (its
// cause), panics or calls runtime.Goexit, or ctx is done; RunContext returns
// the first error, or nil. That context, and every context derived from it,
// is done when RunContext returns. n = 0 runs nothing and returns nil.
//
// At most min(n, MaxWorkers) calls run at once, the caller's among them,
// each copy taking the next i (GOMAXPROCS does not cut the copies, so calls
// that wait for each other behave the same on every machine); every i runs
// once, even once the context is cancelled, whatever another call does. It
// is for CPU-bound calls: give blocking ones a goroutine each (errgroup). If
// ctx is done while the run waits for the set, RunContext returns
// context.Cause(ctx) having run nothing. A busy set, the memory model and panics are as for ForRange, a
// *PanicError naming the i. It panics if ctx or fn is nil, n < 0 or the set
// is closed.
func (w *Workers) RunContext(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return w.s("RunContext").RunContext(ctx, n, fn)
}

// RunContext is Workers.RunContext on a set that is not nil.
func (w *set) RunContext(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	w.check("RunContext")
	if ctx == nil {
		panic(fmt.Sprintf("workers: RunContext on %q: nil context", w.name))
	}
	if fn == nil {
		panic(fmt.Sprintf("workers: RunContext on %q: nil function", w.name))
	}
	if n < 0 {
		panic(fmt.Sprintf("workers: RunContext on %q: negative length %d", w.name, n))
	}
	if n == 0 {
		return nil
	}
	// min(n, MaxWorkers) copies on any machine: calls may wait for each
	// other (a context they all watch), so GOMAXPROCS does not cut them.
	r := rangeConfig{copies: min(n, w.MaxWorkers()), fixed: true, chunk: 1, callerRuns: true}
	return w.runContext(ctx, "RunContext", n, r, nil, fn)
}

// ForRangeContext is ForRange with a context and errors: body calls get a
// context derived from ctx as in RunContext, and copies stop claiming chunks
// once a call returned an error, panicked or called runtime.Goexit, or ctx is
// done (a running call is not interrupted: a smaller WithChunk stops sooner).
// It returns the first error a call returned; otherwise context.Cause(ctx) if
// ctx was done before every chunk was handed out; otherwise nil. It panics
// where ForRange panics, and if ctx is nil.
func (w *Workers) ForRangeContext(ctx context.Context, n int, body func(ctx context.Context, worker, lo, hi int) error, opts ...RangeOption) error {
	return w.s("ForRangeContext").ForRangeContext(ctx, n, body, opts...)
}

// ForRangeContext is Workers.ForRangeContext on a set that is not nil.
func (w *set) ForRangeContext(ctx context.Context, n int, body func(ctx context.Context, worker, lo, hi int) error, opts ...RangeOption) error {
	if ctx == nil {
		w.check("ForRangeContext")
		panic(fmt.Sprintf("workers: ForRangeContext on %q: nil context", w.name))
	}
	r := w.rangeSetup("ForRangeContext", n, body != nil, opts)
	if n == 0 {
		return nil
	}
	return w.runContext(ctx, "ForRangeContext", n, r, body, nil)
}

// runContext runs the loop of ForRangeContext (body) or RunContext (each)
// over [0, n) with a context derived from parent.
func (w *set) runContext(parent context.Context, op string, n int, r rangeConfig, body func(ctx context.Context, worker, lo, hi int) error, each func(ctx context.Context, i int) error) error {
	ctx, cancel := withCancelCause(parent)
	defer cancel(nil) // on every return: the run's context ends with the call
	if body != nil && ctx.Err() != nil {
		return context.Cause(ctx) // parent was done: its cause
	}
	t := rangeCtxPool.Get().(*rangeCtxTask)
	t.body, t.each = body, each
	t.ctx, t.cancel, t.err = ctx, cancel, nil
	t.failed.Store(false)
	waitErr := w.runLoop(ctx, op, t, &t.l, n, r)
	err := t.err
	if waitErr != nil {
		err = waitErr
	} else if err == nil && !t.l.Drained() {
		// Copies stop early without an error only once the run's context
		// is done, which then only parent can have made so (a failed call
		// would have made the loop panic): the cause is parent's.
		err = context.Cause(ctx)
	}
	t.body, t.each, t.ctx, t.cancel, t.err = nil, nil, nil, nil, nil // the pool keeps nothing of the run
	rangeCtxPool.Put(t)
	return err
}

// withCancelCause is context.WithCancelCause(parent), with parent's methods
// kept from every place where a panic or Goexit in them could hang or crash
// anything but the caller or a copy: unless parent is a standard library
// context (stdTypes), the run's context derives from a shield around it. The
// caller holds nothing of the set yet: a panic here is the caller's.
func withCancelCause(parent context.Context) (context.Context, context.CancelCauseFunc) {
	if slices.Contains(stdTypes[:], reflect.TypeOf(parent)) { // the dynamic type
		return context.WithCancelCause(parent)
	}
	s := &shield{Context: parent, done: parent.Done()}
	select {
	case <-s.done:
		// Done already: the context package would cancel the run's
		// context with parent's Err, and panic with an internal error if
		// that is nil. Name the parent's fault instead.
		if parent.Err() == nil {
			ctx, cancel := context.WithCancelCause(&shield{Context: parent}) // never linked: no Done
			cancel(errBrokenParent)
			return ctx, cancel
		}
	default:
	}
	ctx, cancel := context.WithCancelCause(s)
	if s.f != nil {
		// The go statement publishes s.f and s.stop, which AfterFunc
		// wrote during WithCancelCause, to the watch.
		go s.watch(cancel)
	}
	return ctx, cancel
}

// stdTypes are the types of Background, TODO, and the contexts made by
// context.WithCancel, WithCancelCause, WithDeadline and WithTimeout: their
// Done, Err and the Value that links a child to them are their own, so
// WithCancelCause calls no other context's methods to link to them, and they
// cancel the run's context in place. Any other parent costs a shield, an
// allocation: a few percent of a call whose copies take a microsecond.
var stdTypes = func() [4]reflect.Type {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	d, cancel := context.WithTimeout(context.Background(), time.Hour)
	cancel()
	return [4]reflect.Type{reflect.TypeOf(context.Background()), reflect.TypeOf(context.TODO()),
		reflect.TypeOf(c), reflect.TypeOf(d)}
}()

// shield is the parent the context package sees for a run's context: the
// caller's ctx, asked for Done once, on the caller. Value, Deadline and Err
// go to ctx; a misbehaviour there in a copy's call is that copy's panic.
//
// The context package links the run's context to a parent derived from one
// of its own cancellable contexts (Value finds it, Done is its channel),
// which cancels it in place, calling none of ctx's methods. For any other
// parent it calls the parent's AfterFunc, here shield's, instead of starting
// its own goroutine, where a panic in ctx's Err or Value would crash the
// program and a Goexit leave the run's context live: watch makes those
// calls, guarded.
type shield struct {
	context.Context
	done <-chan struct{} // ctx.Done(), asked once

	// f is the function the context package gave AfterFunc: it cancels the
	// run's context with ctx's Err and cause. Written only by AfterFunc,
	// under WithCancelCause, before watch starts.
	f    func()
	stop chan struct{} // closed by stopWatch

	// claimed goes from false to true once, by a CAS: by watch before it runs
	// f, or by stopWatch before it closes stop; so f runs at most once, never
	// after a stop that reported it prevented it, and stop closes at most once.
	claimed atomic.Bool
}

func (s *shield) Done() <-chan struct{} { return s.done }

// AfterFunc is called by context.WithCancelCause for a parent it cannot link
// to; watch runs f once s.done is closed, unless the returned stop is called
// first (the context package calls it when the run's context is cancelled).
func (s *shield) AfterFunc(f func()) (stop func() bool) {
	s.f, s.stop = f, make(chan struct{})
	return s.stopWatch
}

func (s *shield) stopWatch() bool {
	if !s.claimed.CompareAndSwap(false, true) {
		return false
	}
	close(s.stop)
	return true
}

// watch waits for ctx to be done and runs f, or, if ctx's Err or Value panics
// or calls runtime.Goexit there, cancels the run's context with an error
// saying so. It returns once the run's context is cancelled otherwise.
func (s *shield) watch(cancel context.CancelCauseFunc) {
	select {
	case <-s.done:
	case <-s.stop:
		return
	}
	if !s.claimed.CompareAndSwap(false, true) {
		return // cancelled meanwhile
	}
	ok := false
	defer func() {
		if !ok {
			cancel(parentFailed(recover()))
		}
	}()
	if s.Context.Err() == nil {
		cancel(errBrokenParent) // f would panic with the context package's internal error
	} else {
		s.f()
	}
	ok = true
}

// errBrokenParent is the cause of a run's context whose parent broke the
// context contract: its Done channel is closed, but its Err returns nil.
var errBrokenParent = errors.New("workers: the parent context broke its contract: its Done channel is closed but its Err returns nil")

// parentFailed is the cause of a run's context cancelled by watch after ctx's
// Err or Value panicked with v (or called runtime.Goexit: v is nil, since a
// panic(nil) panics with a *runtime.PanicNilError).
func parentFailed(v any) error {
	if v == nil {
		return errors.New("workers: the context's Err or Value called runtime.Goexit once it was done")
	}
	return fmt.Errorf("workers: the context's Err or Value panicked once it was done: %v\n\n%s", v, debug.Stack())
}

// rangeCtxTask is the loop task of ForRangeContext (body) and RunContext
// (each). For ForRangeContext copies drain the loop until it is empty, the
// run's context is done, or a body call fails; for RunContext they claim one
// i at a time and run every i, whatever the context. runContext writes ctx
// and cancel before the run, which is synchronized before every copy starts,
// and reads err after it, synchronized after every copy's return.
type rangeCtxTask struct {
	l      loop
	body   func(ctx context.Context, worker, lo, hi int) error
	each   func(ctx context.Context, i int) error
	ctx    context.Context
	cancel context.CancelCauseFunc
	// failed elects, by a CAS, the copy whose error is the first: it alone
	// writes err and then cancels the context with it, so no copy sees a
	// context cancelled by a later error.
	failed atomic.Bool
	err    error
}

func (t *rangeCtxTask) Name() string {
	if t.each != nil {
		return "workers.RunContext"
	}
	return "workers.ForRangeContext"
}

func (t *rangeCtxTask) CallerCanRun() bool { return t.l.callerRuns }

// callFailed cancels the run's context: a body call panicked or exited, so
// the other copies can stop early (ForRangeContext) or see it (RunContext).
func (t *rangeCtxTask) callFailed() { t.cancel(errCopyPanicked) }

// Work drains the loop for copy c in passes, as rangeTask's.
func (t *rangeCtxTask) Work(c int) {
	id := c
	for !t.l.protect(t, c, &id, func() { t.pass(c, &id) }) {
	}
}

// pass claims and runs chunks until none is left or, for ForRangeContext,
// until the run's context is done or a body call returned an error.
// RunContext's chunks hold one i each, so a call that fails leaves nothing
// of its chunk behind.
func (t *rangeCtxTask) pass(c int, id *int) {
	// Err is an atomic load (the standard cancelCtx's); one that sees the
	// context done is synchronized after the cancel that made it so.
	for t.each != nil || t.ctx.Err() == nil {
		lo, hi, ok := t.l.Next()
		if !ok {
			return
		}
		if t.each != nil {
			*id = lo
			if err := t.each(t.ctx, lo); err != nil {
				t.fail(err)
			}
			continue
		}
		if err := t.body(t.ctx, c, lo, hi); err != nil {
			t.fail(err)
			return
		}
	}
}

func (t *rangeCtxTask) fail(err error) {
	if t.failed.CompareAndSwap(false, true) {
		t.err = err
		t.cancel(err)
	}
}
