package workers_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/workers"
)

func TestRunContextAllSucceed(t *testing.T) {
	w := workers.New("ctx-ok", 3)
	defer w.Close()
	for _, n := range []int{1, 2, 3} {
		runs := make([]atomic.Int32, n)
		var seen atomic.Pointer[context.Context]
		err := w.RunContext(context.Background(), n, func(ctx context.Context, worker int) error {
			runs[worker].Add(1)
			seen.Store(&ctx)
			return ctx.Err()
		})
		require.NoError(t, err)
		for id := range runs {
			assert.Equal(t, int32(1), runs[id].Load(), "n=%d: copy %d", n, id)
		}
		assert.ErrorIs(t, (*seen.Load()).Err(), context.Canceled, "the derived context is cancelled when RunContext returns")
	}
}

// The first error wins, cancels the context the other copies see (with the
// error as its cause) and is returned.
func TestRunContextFirstErrorCancelsOthers(t *testing.T) {
	w := workers.New("ctx-err", 3)
	defer w.Close()
	first := errors.New("first")
	for round := range 20 {
		var causes [3]atomic.Value
		err := w.RunContext(context.Background(), 3, func(ctx context.Context, worker int) error {
			if worker == 0 {
				return first
			}
			<-ctx.Done() // hangs unless copy 0's error cancels the context
			causes[worker].Store(context.Cause(ctx))
			return fmt.Errorf("copy %d: late: %w", worker, ctx.Err())
		})
		require.ErrorIs(t, err, first, "round %d", round)
		require.Equal(t, first, err, "round %d: the first error itself, not a later one", round)
		for id := 1; id < 3; id++ {
			assert.Equal(t, first, causes[id].Load(), "round %d: copy %d's cause", round, id)
		}
	}
}

// A parent's cancellation reaches every copy; the copies report it.
func TestRunContextParentCancel(t *testing.T) {
	w := workers.New("ctx-parent", 2)
	defer w.Close()
	stop := errors.New("stop")
	parent, cancel := context.WithCancelCause(context.Background())
	var started atomic.Int32
	go func() {
		for started.Load() < 2 { // until both copies are about to block on ctx.Done
			runtime.Gosched()
		}
		cancel(stop)
	}()
	err := w.RunContext(parent, 2, func(ctx context.Context, worker int) error {
		started.Add(1)
		<-ctx.Done()
		return context.Cause(ctx)
	})
	assert.Equal(t, stop, err)
}

// A copy's panic still comes back as *PanicError, and cancels the other
// copies' context so they can stop.
func TestRunContextPanic(t *testing.T) {
	w := workers.New("ctx-panic", 2)
	defer w.Close()
	var otherCause atomic.Value
	pe := capturePanic(t, func() {
		_ = w.RunContext(context.Background(), 2, func(ctx context.Context, worker int) error {
			if worker == 1 {
				panic("boom")
			}
			<-ctx.Done() // hangs unless the panic cancels the context
			otherCause.Store(context.Cause(ctx))
			return nil
		})
	})
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, "workers.RunContext", pe.Task)
	assert.Equal(t, 1, pe.Worker)
	assert.ErrorContains(t, otherCause.Load().(error), "panicked")
	// The set stays usable.
	require.NoError(t, w.RunContext(context.Background(), 2, func(context.Context, int) error { return nil }))
}

// capturePanic runs f and returns the *PanicError it panics with.
func capturePanic(t *testing.T, f func()) (pe *workers.PanicError) {
	t.Helper()
	defer func() {
		var ok bool
		pe, ok = recover().(*workers.PanicError)
		require.True(t, ok, "a *PanicError is re-raised")
	}()
	f()
	return nil
}

// Once the context is done, copies stop claiming chunks, and the call
// returns its cause. A body that starts with the context already done was
// claimed before its copy saw the cancellation: at most one per copy other
// than the one that cancelled. (How many chunks run in all depends on the
// scheduler: a copy may even drain the loop before the cancelling copy gets
// to call cancel, and then the call returns nil.)
func TestForRangeContextStopsAfterCancel(t *testing.T) {
	const copies = 2
	w := workers.New("ctx-range", copies)
	defer w.Close()
	const n, cancelAt = 10000, 10
	for round := range 50 {
		for _, opts := range [][]workers.RangeOption{
			{workers.WithChunk(1)},
			{workers.WithChunk(1), workers.WithWorkersOnly()},
			{workers.WithGuided(1)},
		} {
			stop := errors.New("stop")
			parent, cancel := context.WithCancelCause(context.Background())
			var chunks, late, iters atomic.Int32
			err := w.ForRangeContext(parent, n, func(ctx context.Context, _, lo, hi int) error {
				if ctx.Err() != nil {
					late.Add(1)
				}
				iters.Add(int32(hi - lo))
				if chunks.Add(1) == cancelAt {
					cancel(stop)
				}
				return nil
			}, opts...)
			require.LessOrEqual(t, int(late.Load()), copies-1, "round %d: chunks started after the cancel", round)
			if iters.Load() < n {
				require.Equal(t, stop, err, "round %d: a loop cut short returns the cause", round)
			} else {
				require.NoError(t, err, "round %d: a loop that ran every chunk returns nil", round)
			}
		}
	}
}

func TestForRangeContextBodyError(t *testing.T) {
	const copies = 2
	w := workers.New("ctx-range-err", copies)
	defer w.Close()
	bad := errors.New("bad chunk")
	for round := range 50 {
		var late atomic.Int32
		err := w.ForRangeContext(context.Background(), 1000, func(ctx context.Context, _, lo, hi int) error {
			if ctx.Err() != nil {
				late.Add(1)      // claimed before its copy saw the error
				return ctx.Err() // a later error loses to the first
			}
			if lo == 50 {
				return bad
			}
			return nil
		}, workers.WithChunk(10))
		require.Equal(t, bad, err, "round %d", round)
		require.LessOrEqual(t, int(late.Load()), copies-1, "round %d: chunks started after the error", round)
	}
}

func TestForRangeContextComplete(t *testing.T) {
	w := workers.New("ctx-range-done", 2)
	defer w.Close()
	// Every iteration runs: nil, even though the context is done by then.
	parent, cancel := context.WithCancel(context.Background())
	var sum atomic.Int64
	err := w.ForRangeContext(parent, 100, func(_ context.Context, _, lo, hi int) error {
		sum.Add(int64(hi - lo))
		if hi == 100 {
			cancel()
		}
		return nil
	}, workers.WithChunk(100))
	assert.NoError(t, err)
	assert.Equal(t, int64(100), sum.Load())

	// Already done: nothing runs; the cause comes back.
	err = w.ForRangeContext(parent, 100, func(context.Context, int, int, int) error {
		t.Error("body ran on a done context")
		return nil
	})
	assert.ErrorIs(t, err, context.Canceled)
	// Empty loop: nothing to cut short.
	assert.NoError(t, w.ForRangeContext(parent, 0, func(context.Context, int, int, int) error { return nil }))
}

func TestForRangeContextPanic(t *testing.T) {
	w := workers.New("ctx-range-panic", 2)
	defer w.Close()
	pe := capturePanic(t, func() {
		_ = w.ForRangeContext(context.Background(), 100, func(_ context.Context, _, lo, _ int) error {
			if lo == 0 {
				panic("boom")
			}
			return nil
		}, workers.WithChunk(10))
	})
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, "workers.ForRangeContext", pe.Task)
}

func TestContextMisuse(t *testing.T) {
	w := workers.New("ctx-misuse", 2)
	defer w.Close()
	fn := func(context.Context, int) error { return nil }
	body := func(context.Context, int, int, int) error { return nil }
	bg := context.Background()
	var nilCtx context.Context
	for _, tc := range []struct {
		name string
		call func()
		want string
	}{
		{"nil ctx", func() { _ = w.RunContext(nilCtx, 1, fn) }, `workers: RunContext on "ctx-misuse": nil context`},
		{"nil fn", func() { _ = w.RunContext(bg, 1, nil) }, `workers: RunContext on "ctx-misuse": nil function`},
		{"n -1", func() { _ = w.RunContext(bg, -1, fn) }, `workers: RunContext on "ctx-misuse": negative length -1`},
		{"range nil ctx", func() { _ = w.ForRangeContext(nilCtx, 1, body) }, `workers: ForRangeContext on "ctx-misuse": nil context`},
		{"range nil body", func() { _ = w.ForRangeContext(bg, 1, nil) }, `workers: ForRangeContext on "ctx-misuse": nil body`},
		{"range negative n", func() { _ = w.ForRangeContext(bg, -1, body) }, `workers: ForRangeContext on "ctx-misuse": negative length -1`},
		{"range bad chunk", func() { _ = w.ForRangeContext(bg, 1, body, workers.WithChunk(0)) }, `workers: ForRangeContext on "ctx-misuse": WithChunk(0): chunk < 1`},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.PanicsWithValue(t, tc.want, tc.call) })
	}
}

// RunContext with n = 0 runs nothing and returns nil, as errgroup with no
// functions does, even with a parent already done.
func TestRunContextOfNothing(t *testing.T) {
	w := workers.New("ctx-zero", 2)
	defer w.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ctx := range []context.Context{context.Background(), done} {
		err := w.RunContext(ctx, 0, func(context.Context, int) error {
			t.Error("fn called for n = 0")
			return nil
		})
		assert.NoError(t, err)
	}
	assert.Zero(t, w.Stats().Runs, "nothing ran")
}

// Copies that poll Err (never Done) see a parent's cancellation, with the
// parent's Err and cause.
func TestRunContextParentCancelPolled(t *testing.T) {
	w := workers.New("ctx-parent-poll", 2)
	defer w.Close()
	stop := errors.New("stop")
	for round := range 20 {
		parent, cancel := context.WithCancelCause(context.Background())
		var errs [2]atomic.Value
		err := w.RunContext(parent, 2, func(ctx context.Context, worker int) error {
			if worker == 0 {
				cancel(stop)
			}
			for ctx.Err() == nil {
				runtime.Gosched()
			}
			errs[worker].Store(ctx.Err())
			return context.Cause(ctx)
		})
		require.Equal(t, stop, err, "round %d", round)
		for id := range errs {
			require.Equal(t, context.Canceled, errs[id].Load(), "round %d: copy %d's Err", round, id)
		}
	}
}

type ctxKey struct{}

// A parent's deadline, Err and values reach the copies; a parent already done
// when the set is free still runs every copy, which see it done.
func TestRunContextParentDeadlineAndValues(t *testing.T) {
	w := workers.New("ctx-deadline", 2)
	defer w.Close()
	deadline := time.Now().Add(-time.Second)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), ctxKey{}, "v"), deadline)
	defer cancel()
	var ran atomic.Int32
	err := w.RunContext(parent, 2, func(ctx context.Context, _ int) error {
		ran.Add(1)
		if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
			return fmt.Errorf("Deadline() = %v, %v; want %v, true", d, ok, deadline)
		}
		if v := ctx.Value(ctxKey{}); v != "v" {
			return fmt.Errorf("Value = %v; want v", v)
		}
		select {
		case <-ctx.Done():
		default:
			return errors.New("Done not closed")
		}
		if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != context.DeadlineExceeded {
			return fmt.Errorf("Err, Cause = %v, %v; want DeadlineExceeded", ctx.Err(), context.Cause(ctx))
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int32(2), ran.Load())
}

// valueErr is an error of an uncomparable type: comparing two of them with
// == panics, which the run's cause bookkeeping must not do.
type valueErr struct{ ids []int }

func (e valueErr) Error() string { return fmt.Sprint("bad ", e.ids) }

// Cause is the failing copy's error whatever its type, run after run, and
// contexts derived from the copies' (WithCancel, AfterFunc) end with it.
func TestRunContextCauseAndDerived(t *testing.T) {
	w := workers.New("ctx-cause", 2)
	defer w.Close()
	sentinel := errors.New("sentinel")
	for round := range 10 {
		for _, fail := range []error{sentinel, valueErr{[]int{round}}, fmt.Errorf("round %d", round)} {
			var childCause, afterCause atomic.Value
			err := w.RunContext(context.WithValue(context.Background(), ctxKey{}, "v"), 2, func(ctx context.Context, worker int) error {
				if worker == 0 {
					return fail
				}
				child, cancel := context.WithCancel(ctx)
				defer cancel()
				after := make(chan struct{})
				stop := context.AfterFunc(ctx, func() { afterCause.Store(context.Cause(ctx)); close(after) })
				defer stop()
				<-child.Done()
				<-after
				childCause.Store(context.Cause(child))
				if v := ctx.Value(ctxKey{}); v != "v" {
					return fmt.Errorf("Value after the cancel = %v; want v", v)
				}
				return nil
			})
			require.Equal(t, fail, err, "round %d", round)
			require.Equal(t, fail, childCause.Load(), "round %d: the derived context's cause", round)
			require.Equal(t, fail, afterCause.Load(), "round %d: Cause in an AfterFunc", round)
		}
	}
}

// Contexts derived from a copy's are linked to it, starting no goroutine each
// to watch it, and end with it; context.AfterFunc on it runs once the run is
// done unless stopped.
func TestRunContextDerivedWithoutGoroutines(t *testing.T) {
	w := workers.New("ctx-derived", 1)
	defer w.Close()
	const children = 100
	var stoppedRan, ran atomic.Bool
	stopRes := false
	var kids []context.Context
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	var extra int
	fail := errors.New("fail")
	err := w.RunContext(context.Background(), 1, func(ctx context.Context, _ int) error { // inline: no other copy
		before := runtime.NumGoroutine()
		for range children {
			c, cancel := context.WithCancel(ctx)
			kids, cancels = append(kids, c), append(cancels, cancel) // cancelled after the checks
		}
		extra = runtime.NumGoroutine() - before
		stop := context.AfterFunc(ctx, func() { stoppedRan.Store(true) })
		stopRes = stop()
		context.AfterFunc(ctx, func() { ran.Store(true) })
		return fail
	})
	require.Equal(t, fail, err)
	assert.Less(t, extra, children/2, "goroutines started by deriving %d contexts", children)
	for i, c := range kids {
		<-c.Done() // hangs unless the copy's failure reached every child
		require.Equal(t, fail, context.Cause(c), "child %d", i)
	}
	assert.True(t, stopRes, "stop before the run ended reports that it stopped f")
	require.Eventually(t, ran.Load, 10*time.Second, time.Millisecond, "an AfterFunc not stopped runs once the run is done")
	assert.False(t, stoppedRan.Load(), "a stopped AfterFunc ran")
}

// A context a copy kept stays what a cancelled standard context is, later
// runs on the set notwithstanding (done, with its parent's values and its
// cause), and once it is dropped nothing of the run stays reachable: the set
// keeps nothing of it (the parent and its values, fn, the error).
func TestRunContextKeepsNothing(t *testing.T) {
	w := workers.New("ctx-keep", 2)
	defer w.Close()
	for _, withDone := range []bool{false, true} {
		kept, weaks := keptRun(t, w, withDone)
		for range 3 { // later runs must not bring the kept context back to life
			require.NoError(t, w.RunContext(context.Background(), 2, func(ctx context.Context, _ int) error {
				if kept.Err() == nil {
					return errors.New("a kept context is live again during a later run")
				}
				return ctx.Err()
			}))
		}
		require.ErrorIs(t, kept.Err(), context.Canceled)
		select {
		case <-kept.Done():
		default:
			t.Fatal("a kept context's Done is not closed after the run")
		}
		assert.NotNil(t, kept.Value(ctxKey{}), "a kept context keeps its parent's values")
		assert.Equal(t, "big", context.Cause(kept).Error(), "a kept context keeps its cause")
		kept = nil
		for range 3 {
			runtime.GC()
		}
		for i, wp := range weaks {
			assert.Nil(t, wp.Value(), "withDone %v: object %d of the run still reachable", withDone, i)
		}
	}
}

// keptRun runs a failing RunContext whose parent holds a value, whose fn
// captures a pointer and whose error is a pointer, and returns the context
// copy 1 kept and weak pointers to the three.
func keptRun(t *testing.T, w *workers.Workers, withDone bool) (context.Context, [3]weak.Pointer[[64]byte]) {
	val, captured := new([64]byte), new([64]byte)
	fail := &bigErr{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, val))
	defer cancel()
	var kept context.Context
	err := w.RunContext(parent, 2, func(ctx context.Context, worker int) error {
		captured[worker] = 1
		if worker == 0 {
			return fail
		}
		if withDone {
			<-ctx.Done()
		}
		kept = ctx
		return nil
	})
	require.Equal(t, error(fail), err)
	return kept, [3]weak.Pointer[[64]byte]{weak.Make(val), weak.Make(captured), weak.Make(&fail.pad)}
}

type bigErr struct{ pad [64]byte }

func (*bigErr) Error() string { return "big" }

// A parent that was linked to a run (a copy called Done) and is cancelled
// after that run returned leaves later runs on the same set alone.
func TestRunContextOldParentWatch(t *testing.T) {
	w := workers.New("ctx-old-watch", 2)
	defer w.Close()
	for round := range 20 {
		parent, cancel := context.WithCancel(context.Background())
		require.NoError(t, w.RunContext(parent, 2, func(ctx context.Context, _ int) error {
			select {
			case <-ctx.Done():
				return errors.New("done too early")
			default:
				return nil
			}
		}))
		err := w.RunContext(context.Background(), 2, func(ctx context.Context, worker int) error {
			done := ctx.Done()
			if worker == 0 {
				cancel()
			}
			for range 100 {
				runtime.Gosched()
			}
			select {
			case <-done:
				return errors.New("a later run's context ended with an old parent")
			default:
			}
			return ctx.Err()
		})
		require.NoError(t, err, "round %d", round)
	}
}

// TestContextAllocations pins the allocation counts of the calls with a
// context on a long-lived set, whatever the path (one copy inline, copies on
// workers, more ids than workers, a busy set): two per call, the run's
// context and its cancel function (context.WithCancelCause), with Background
// or a parent made by context.WithCancel, and a third with a parent of
// another type (here context.WithValue), the run's view of it. Cancelling
// with a copy's error and asking for the cause cost nothing more; a copy
// asking for Done makes the channel. Plain ForRange stays at 0.
func TestContextAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	w := workers.New("ctx-alloc", 2)
	defer w.Close()
	busy := workers.New("ctx-alloc-busy", 2, workers.WithConcurrentRuns())
	defer busy.Close()
	bg := context.Background()
	parent, cancelParent := context.WithCancel(bg)
	defer cancelParent()
	valued := context.WithValue(parent, ctxKey{}, "v")
	// Func literals that capture nothing, so the test itself allocates
	// nothing per call.
	fn := func(context.Context, int) error { return nil }
	// Copy 0 fails at once; copy 1 polls Err until that cancels the
	// context, and checks the cause.
	failOrPoll := func(ctx context.Context, worker int) error {
		if worker == 0 {
			return errors.ErrUnsupported
		}
		for ctx.Err() == nil {
			runtime.Gosched()
		}
		if context.Cause(ctx) != errors.ErrUnsupported {
			panic("wrong cause")
		}
		return nil
	}
	// The same, copy 1 waiting on Done.
	failOrWait := func(ctx context.Context, worker int) error {
		if worker == 0 {
			return errors.ErrUnsupported
		}
		<-ctx.Done()
		return nil
	}
	body := func(context.Context, int, int, int) error { return nil }
	failAt500 := func(_ context.Context, _, lo, _ int) error {
		if lo == 500 {
			return errors.ErrUnsupported
		}
		return nil
	}
	plain := func(int, int, int) {}
	for _, tc := range []struct {
		name string
		call func()
		want float64
	}{
		{"RunContext n=1", func() { _ = w.RunContext(bg, 1, fn) }, 2},
		{"RunContext n=2", func() { _ = w.RunContext(bg, 2, fn) }, 2},
		{"RunContext n=5 on 2 workers", func() { _ = w.RunContext(bg, 5, fn) }, 2},
		{"RunContext, cancellable parent", func() { _ = w.RunContext(parent, 2, fn) }, 2},
		{"RunContext, parent with a value", func() { _ = w.RunContext(valued, 2, fn) }, 3},
		{"RunContext, sentinel error, Cause asked", func() { _ = w.RunContext(bg, 2, failOrPoll) }, 2},
		{"RunContext, sentinel error, cancellable parent", func() { _ = w.RunContext(parent, 2, failOrPoll) }, 2},
		{"RunContext, a copy waits on Done", func() { _ = w.RunContext(bg, 2, failOrWait) }, 3}, // 2 if the failure came first
		{"RunContext on a busy set", func() { _ = busy.RunContext(bg, 2, fn) }, 2},
		{"RunContext n=1 on a busy set", func() { _ = busy.RunContext(bg, 1, fn) }, 2},
		{"ForRangeContext", func() { _ = w.ForRangeContext(bg, 1000, body) }, 2},
		{"ForRangeContext, two copies", func() { _ = w.ForRangeContext(bg, 1000, body, workers.WithCopies(2)) }, 2},
		{"ForRangeContext, one chunk", func() { _ = w.ForRangeContext(bg, 1000, body, workers.WithChunk(1000)) }, 2},
		{"ForRangeContext, cancellable parent", func() { _ = w.ForRangeContext(parent, 1000, body) }, 2},
		{"ForRangeContext, parent with a value", func() { _ = w.ForRangeContext(valued, 1000, body) }, 3},
		{"ForRangeContext, sentinel error", func() { _ = w.ForRangeContext(bg, 1000, failAt500, workers.WithChunk(10)) }, 2},
		{"ForRangeContext on a busy set", func() { _ = busy.ForRangeContext(bg, 1000, body) }, 2},
		{"ForRange", func() { w.ForRange(1000, plain) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "busy") {
				release := holdSet(busy, 2)
				defer release()
			}
			tc.call() // warm the pools and create the workers
			got := testing.AllocsPerRun(200, tc.call)
			assert.LessOrEqual(t, got, tc.want, "allocations per call")
		})
	}
}

// RunContext runs copies errgroup-style: the first error cancels the
// context the others see and is returned. n may exceed the set's size: here
// 8 shards are scored on a set of 2, at most 2 at a time.
func ExampleWorkers_RunContext() {
	w := workers.New("shards", 2)
	defer w.Close()

	shards := make([][]int, 8)
	for i := range shards {
		shards[i] = make([]int, 1000)
		for j := range shards[i] {
			shards[i][j] = i + j
		}
	}
	shards[5][10] = -1 // a corrupt entry
	scores := make([]int, len(shards))
	err := w.RunContext(context.Background(), len(shards), func(ctx context.Context, i int) error {
		for j, x := range shards[i] {
			if ctx.Err() != nil {
				return nil // another shard failed: stop early
			}
			if x < 0 {
				return fmt.Errorf("shard %d: corrupt entry %d", i, j)
			}
			scores[i] += x * x
		}
		return nil
	})
	fmt.Println(err) // the shards scored before it are in scores
	// Output: shard 5: corrupt entry 10
}

// ForRangeContext stops handing out chunks once a body call fails (or its
// context is done) and returns the error.
func ExampleWorkers_ForRangeContext() {
	w := workers.New("scan", 2)
	defer w.Close()

	data := make([]int, 1_000_000)
	data[123_456] = 42
	err := w.ForRangeContext(context.Background(), len(data), func(ctx context.Context, _, lo, hi int) error {
		for i := lo; i < hi; i++ {
			if data[i] == 42 {
				return fmt.Errorf("found 42 at %d", i) // the other copies stop claiming chunks
			}
		}
		return nil
	}, workers.WithChunk(1000))
	fmt.Println(err)
	// Output: found 42 at 123456
}

// A context a copy kept is a cancelled standard context once the call
// returned: its Err and its cause are final, whatever its parent does later.
func TestContextKeptCauseIsFinal(t *testing.T) {
	w := workers.New("ctx-kept-cause", 2)
	defer w.Close()
	fail, later := errors.New("fail"), errors.New("later")
	for _, tc := range []struct {
		name  string
		call  func(parent context.Context, keep func(context.Context)) error
		cause error
	}{
		{"RunContext", func(parent context.Context, keep func(context.Context)) error {
			return w.RunContext(parent, 2, func(ctx context.Context, _ int) error { keep(ctx); return nil })
		}, context.Canceled},
		{"RunContext, a copy fails", func(parent context.Context, keep func(context.Context)) error {
			err := w.RunContext(parent, 2, func(ctx context.Context, id int) error {
				keep(ctx)
				if id == 0 {
					return fail
				}
				return nil
			})
			if err != fail {
				return fmt.Errorf("RunContext returned %v; want %v", err, fail)
			}
			return nil
		}, fail},
		{"ForRangeContext", func(parent context.Context, keep func(context.Context)) error {
			return w.ForRangeContext(parent, 4, func(ctx context.Context, _, _, _ int) error { keep(ctx); return nil }, workers.WithChunk(1))
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var kept atomic.Pointer[context.Context]
			require.NoError(t, tc.call(parent, func(ctx context.Context) { kept.Store(&ctx) }))
			ctx := *kept.Load()
			assert.Equal(t, context.Canceled, ctx.Err(), "Err after the call")
			assert.Equal(t, tc.cause, context.Cause(ctx), "Cause after the call")
			cancel(later)
			assert.Equal(t, context.Canceled, ctx.Err(), "Err once the parent is cancelled too")
			assert.Equal(t, tc.cause, context.Cause(ctx), "Cause once the parent is cancelled too")
		})
	}
}

// Contexts derived from the copies' are done when the call returns, as
// errgroup's are: nothing of the run goes on after it.
func TestContextDerivedDoneOnReturn(t *testing.T) {
	w := workers.New("ctx-derived-return", 2)
	defer w.Close()
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, p := range []context.Context{context.Background(), parent} {
		for _, n := range []int{1, 2, 3} {
			for round := range 50 {
				kids := make([]context.Context, n)
				cancels := make([]context.CancelFunc, n)
				err := w.RunContext(p, n, func(ctx context.Context, id int) error {
					kids[id], cancels[id] = context.WithCancel(ctx)
					return nil
				})
				require.NoError(t, err)
				for id, kid := range kids {
					require.ErrorIs(t, kid.Err(), context.Canceled, "n=%d round %d: copy %d's derived context when RunContext returned", n, round, id)
					cancels[id]()
				}
				var kid context.Context
				var kidCancel context.CancelFunc
				err = w.ForRangeContext(p, 1, func(ctx context.Context, _, _, _ int) error {
					kid, kidCancel = context.WithCancel(ctx)
					return nil
				})
				require.NoError(t, err)
				require.ErrorIs(t, kid.Err(), context.Canceled, "round %d: the body's derived context when ForRangeContext returned", round)
				kidCancel()
			}
		}
	}
}

// hostileCtx is a context whose method named method panics, or calls
// runtime.Goexit, every time it is called; the others work. done is its
// Done channel (nil: never done); cancel closes it.
type hostileCtx struct {
	method string
	goexit bool
	done   chan struct{}
}

func (h *hostileCtx) misbehave(m string) {
	if m != h.method {
		return
	}
	if h.goexit {
		runtime.Goexit()
	}
	panic("hostile " + m)
}

func (h *hostileCtx) Deadline() (time.Time, bool) {
	h.misbehave("Deadline")
	return time.Time{}, false
}

func (h *hostileCtx) Done() <-chan struct{} {
	h.misbehave("Done")
	if h.done == nil {
		return nil // a nil chan struct{} is not a nil <-chan struct{}
	}
	return h.done
}

func (h *hostileCtx) Err() error {
	h.misbehave("Err")
	select {
	case <-h.done:
		return context.Canceled
	default:
		return nil
	}
}

func (h *hostileCtx) Value(key any) any {
	h.misbehave("Value")
	if key == (ctxKey{}) {
		return "v"
	}
	return nil
}

var _ context.Context = (*hostileCtx)(nil)

// newHostileCtx returns a hostileCtx whose method misbehaves, in state
// "never done" (Done returns nil), "live", "done before" (already done) or
// "done during" (the run's copy 0 ends it, see copyFunc).
func newHostileCtx(method string, goexit bool, state string) *hostileCtx {
	h := &hostileCtx{method: method, goexit: goexit}
	if state != "never done" {
		h.done = make(chan struct{})
	}
	if state == "done before" {
		close(h.done)
	}
	return h
}

// copyFunc returns a RunContext function for a run under h: each id counts
// its runs in ran; id 0 ends h if state is "done during"; and if touch, each
// uses its context (Value, Deadline, and Done, which it waits for when h
// ends during the run) and returns its cause.
func (h *hostileCtx) copyFunc(state string, touch bool, ran []atomic.Int32) func(context.Context, int) error {
	var once sync.Once
	return func(ctx context.Context, id int) error {
		ran[id].Add(1)
		if state == "done during" && id == 0 {
			once.Do(func() { close(h.done) })
		}
		if !touch {
			return nil
		}
		_ = ctx.Value(ctxKey{})
		_, _ = ctx.Deadline()
		if state == "done during" {
			<-ctx.Done() // hangs unless the parent's end reaches the run
		}
		return context.Cause(ctx)
	}
}

// A parent context whose methods panic or call runtime.Goexit never hangs a
// run, crashes the program or leaks a goroutine (TestMain's goleak checks
// that), and leaves the set usable: the misbehaviour reaches the caller (a
// panic, a Goexit, or a copy's *PanicError), or the run returns, and the next
// run on the same set runs every id. Parents that are never done, live, done
// before the call, or done during it (copies then wait for their context to
// be done); copies that use their context or leave it alone.
func TestContextHostileParent(t *testing.T) {
	w := workers.New("ctx-hostile", 2)
	defer w.Close()
	for _, method := range []string{"Err", "Done", "Value", "Deadline"} {
		for _, goexit := range []bool{false, true} {
			for _, state := range []string{"never done", "live", "done before", "done during"} {
				for _, call := range []struct {
					n    int
					loop bool // ForRangeContext over n iterations
				}{{1, false}, {2, false}, {3, false}, {4, true}} {
					for _, touch := range []bool{false, true} {
						name := fmt.Sprintf("%s goexit=%v, %s, n=%d loop=%v, touch=%v", method, goexit, state, call.n, call.loop, touch)
						h := newHostileCtx(method, goexit, state)
						ran := make([]atomic.Int32, call.n)
						fn := h.copyFunc(state, touch, ran)
						var o testutil.Outcome
						var err error
						testutil.Within(t, name, 30*time.Second, func() {
							o = testutil.Call(func() {
								if call.loop {
									err = w.ForRangeContext(h, call.n, func(ctx context.Context, _, lo, _ int) error { return fn(ctx, lo) }, workers.WithChunk(1))
								} else {
									err = w.RunContext(h, call.n, fn)
								}
							})
						})
						checkHostileOutcome(t, name, o, h)
						if o.Returned() && (!call.loop || err == nil) {
							for id := range ran {
								assert.Equal(t, int32(1), ran[id].Load(), "%s: id %d's runs", name, id)
							}
						}
						if o.Returned() && method == "Err" && state == "done during" && touch {
							// The run's context was cancelled all the same,
							// with a cause that says why.
							assert.ErrorContains(t, err, "the context's Err or Value", name)
						}
						runsEveryID(t, w, name)
					}
				}
			}
		}
	}
}

// checkHostileOutcome checks that a call under h returned, or ended with
// h's own misbehaviour.
func checkHostileOutcome(t *testing.T, name string, o testutil.Outcome, h *hostileCtx) {
	t.Helper()
	if (o.Panicked || o.Goexit) && !h.caused(o) {
		t.Errorf("%s: ended with %+v; want a return or the parent's own misbehaviour", name, o)
	}
}

// caused reports whether o, the end of a call that did not return, is h's
// misbehaviour: its panic or Goexit on the caller, or a copy's *PanicError
// for either.
func (h *hostileCtx) caused(o testutil.Outcome) bool {
	if o.Goexit {
		return h.goexit
	}
	v := o.Value
	if pe, ok := v.(*workers.PanicError); ok {
		if pe.Goexit {
			return h.goexit // a copy on a worker called the method
		}
		v = pe.Value
	}
	return !h.goexit && v == "hostile "+h.method
}

// runsEveryID checks that a run on w runs every id once and returns nil.
func runsEveryID(t *testing.T, w *workers.Workers, name string) {
	t.Helper()
	var ran [4]atomic.Int32
	testutil.Within(t, name+": the next run", 30*time.Second, func() {
		require.NoError(t, w.RunContext(context.Background(), len(ran), func(ctx context.Context, id int) error {
			ran[id].Add(1)
			return ctx.Err()
		}), "%s: the next run", name)
	})
	for id := range ran {
		require.Equal(t, int32(1), ran[id].Load(), "%s: the next run's id %d", name, id)
	}
}

// brokenCtx breaks the context contract: Done is closed (at once, or once
// closed is called), but Err returns nil.
type brokenCtx struct {
	context.Context
	done chan struct{}
}

func (b *brokenCtx) Done() <-chan struct{} { return b.done }
func (b *brokenCtx) Err() error            { return nil }

// A parent whose Done is closed while Err returns nil gets the copies a
// context cancelled with a cause that names the parent's fault, whether it
// was done before the call or during it; nothing reports a panic that never
// happened, and the caller never sees the context package's internal error.
func TestContextParentBreaksTheContract(t *testing.T) {
	w := workers.New("ctx-broken", 2)
	defer w.Close()
	for _, before := range []bool{true, false} {
		t.Run(fmt.Sprintf("done before the call=%v", before), func(t *testing.T) {
			parent := &brokenCtx{Context: context.Background(), done: make(chan struct{})}
			if before {
				close(parent.done)
			}
			var causes [2]atomic.Value
			o := testutil.Call(func() {
				_ = w.RunContext(parent, 2, func(ctx context.Context, i int) error {
					if !before && i == 0 {
						close(parent.done)
					}
					<-ctx.Done()
					causes[i].Store(context.Cause(ctx))
					return nil
				})
			})
			require.True(t, o.Returned(), "got %+v; want a return", o)
			for i := range causes {
				err, _ := causes[i].Load().(error)
				require.Error(t, err, "copy %d's cause", i)
				assert.Contains(t, err.Error(), "broke its contract", "copy %d", i)
				assert.NotContains(t, err.Error(), "panicked", "copy %d: nothing panicked", i)
			}
		})
	}
}
