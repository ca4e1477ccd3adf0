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

// errCopyPanicked is the cause of a run's context cancelled because a call
// panicked or called runtime.Goexit (the caller gets a *PanicError).
var errCopyPanicked = errors.New("workers: a copy of the run panicked")

// RunContext calls fn(ctx, i) for each i in [0, n), as errgroup.Group
// would, and returns the first error a call returned, or nil. fn's context
// derives from ctx (context.WithCancelCause) and is cancelled once a call
// returns an error (its cause), panics or calls runtime.Goexit, once ctx is
// done, and when RunContext returns. Every i runs once, even after that.
//
// Up to min(n, MaxWorkers) calls run at once, whatever GOMAXPROCS or the
// machine's load, so calls may wait for each other (their copies start
// within a bounded time); it is for CPU-bound calls, though (blocking ones
// want a goroutine each). The exception: on a set with concurrent runs
// (WithConcurrentRuns, Acquire, Default) that another run holds, RunContext
// runs on its caller alone, one call after another, as ForRange does; calls
// that wait for each other need a set of their own there. If ctx is done
// while the run waits for the set, it returns context.Cause(ctx) having run
// nothing. Otherwise it is ForRange with one i per chunk, a *PanicError
// naming the i. It panics if ctx or fn is nil, n < 0 or the set is closed.
func (w *Workers) RunContext(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
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
	r := rangeConfig{copies: min(n, w.MaxWorkers()), fixed: true, chunk: 1, callerRuns: true}
	return w.runContext(ctx, "RunContext", n, r, nil, fn)
}

// ForRangeContext is ForRange with a context and errors: body calls get a
// context derived from ctx as in RunContext, and copies stop claiming chunks
// once a call fails or ctx is done. It returns the first error a call
// returned, else context.Cause(ctx) if ctx was done before every chunk was
// claimed, else nil. It panics where ForRange does, and if ctx is nil.
func (w *Workers) ForRangeContext(ctx context.Context, n int, body func(ctx context.Context, worker, lo, hi int) error, opts ...RangeOption) error {
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

// runContext runs ForRangeContext (body) or RunContext (each) over [0, n).
func (w *Workers) runContext(parent context.Context, op string, n int, r rangeConfig, body func(ctx context.Context, worker, lo, hi int) error, each func(ctx context.Context, i int) error) error {
	ctx, cancel := withCancelCause(parent)
	defer cancel(nil) // the run's context ends with the call
	if body != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	t := rangePool.Get().(*rangeTask)
	t.ctxBody, t.ctxEach = body, each
	t.ctx, t.cancel, t.err = ctx, cancel, nil
	t.failed.Store(false)
	err := w.runLoop(ctx, op, t, &t.l, n, r)
	if err == nil {
		err = t.err
	}
	if err == nil && !t.l.Drained() { // stopped early: parent made ctx done
		err = context.Cause(ctx)
	}
	t.ctxBody, t.ctxEach, t.ctx, t.cancel, t.err = nil, nil, nil, nil, nil // the pool keeps nothing of the call
	rangePool.Put(t)
	return err
}

// withCancelCause is context.WithCancelCause(parent), with a parent not of
// the standard library's types behind a shield, so that a panic or Goexit in
// its methods hangs or crashes nothing but the caller or a copy.
func withCancelCause(parent context.Context) (context.Context, context.CancelCauseFunc) {
	if slices.Contains(stdTypes[:], reflect.TypeOf(parent)) {
		return context.WithCancelCause(parent)
	}
	s := &shield{Context: parent, done: parent.Done()}
	select {
	case <-s.done: // the context package would panic on a nil Err
		if parent.Err() == nil {
			ctx, cancel := context.WithCancelCause(&shield{Context: parent}) // no Done: never linked
			cancel(errBrokenParent)
			return ctx, cancel
		}
	default:
	}
	ctx, cancel := context.WithCancelCause(s)
	if s.f != nil { // the go statement publishes AfterFunc's s.f and s.stop
		go s.watch(cancel)
	}
	return ctx, cancel
}

// stdTypes are the types of Background, TODO, and the contexts of
// WithCancel, WithCancelCause, WithDeadline and WithTimeout: the context
// package links a child to them calling none of their methods.
var stdTypes = func() [4]reflect.Type {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	d, cancel := context.WithTimeout(context.Background(), time.Hour)
	cancel()
	return [4]reflect.Type{reflect.TypeOf(context.Background()), reflect.TypeOf(context.TODO()),
		reflect.TypeOf(c), reflect.TypeOf(d)}
}()

// shield is the parent the context package sees for a run's context: the
// caller's ctx, Done asked once, on the caller. For it the context package
// calls AfterFunc (watch), not a goroutine of its own where a panic in ctx's
// Err or Value would crash the program and a Goexit leave the context live.
type shield struct {
	context.Context
	done <-chan struct{} // ctx.Done()
	f    func()          // cancels the run's context; set by AfterFunc
	stop chan struct{}   // closed by stopWatch
	// claimed's CAS, by watch before it runs f or by stopWatch before it
	// closes stop, lets f run at most once, never after a successful stop.
	claimed atomic.Bool
}

func (s *shield) Done() <-chan struct{} { return s.done }

// AfterFunc has watch run f once s.done is closed, unless stop comes first.
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

// watch waits for ctx to be done and runs f; if ctx's Err or Value panics or
// calls runtime.Goexit, it cancels the run's context saying so.
func (s *shield) watch(cancel context.CancelCauseFunc) {
	select {
	case <-s.done:
	case <-s.stop:
		return
	}
	if !s.claimed.CompareAndSwap(false, true) {
		return // stopped meanwhile
	}
	ok := false
	defer func() {
		if ok {
			return
		}
		cause := errors.New("workers: the context's Err or Value called runtime.Goexit once it was done")
		if v := recover(); v != nil { // nil: a Goexit (panic(nil) panics with a non-nil value)
			cause = fmt.Errorf("workers: the context's Err or Value panicked once it was done: %v\n\n%s", v, debug.Stack())
		}
		cancel(cause)
	}()
	if s.Context.Err() == nil {
		cancel(errBrokenParent) // f would panic in the context package
	} else {
		s.f()
	}
	ok = true
}

var errBrokenParent = errors.New("workers: the parent context broke its contract: its Done channel is closed but its Err returns nil")
