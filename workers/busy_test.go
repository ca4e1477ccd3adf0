package workers_test

import (
	"context"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// Busy runs: a caller-runs run on a set with concurrent runs that finds the
// set held by another goroutine's run. Every copy of such a run runs on its
// caller, so no copy of it is ever on a worker, where it could outlive the
// run that holds the set and meet Close, a last release or a nested run from
// the wrong side. Each test below acts from copy 1 of a busy run of two
// copies, once the run that held the set has returned: the moment when, with
// copies on workers, the set's lock is free while a copy still runs on one of
// its workers.

// busyAct starts a plain run of one copy that holds w, then a caller-runs run
// of two copies that finds w busy. Its copy 0 gives copy 1 up to 100 ms to
// start elsewhere (it never does: both run on the caller); copy 1 waits until
// the holding run has returned, then calls act. busyAct returns what act's
// goroutine did: the busy run's panic value (nil if none), and whether copy 1
// ran on the busy run's caller.
func busyAct(t *testing.T, w runner, act func()) (v any, onCaller bool) {
	t.Helper()
	release := holdSet(w, 1)
	var started sync.WaitGroup
	started.Add(1)
	heldReturned := make(chan struct{})
	var copy1Started atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		caller := goid.Get()
		v = panicValue(func() {
			w.RunN(tasks.CallerRuns(tasks.Func("busy", func(id int) {
				if id == 0 {
					started.Done()
					for deadline := time.Now().Add(100 * time.Millisecond); !copy1Started.Load() && time.Now().Before(deadline); {
						runtime.Gosched()
					}
					return
				}
				copy1Started.Store(true)
				onCaller = goid.Get() == caller
				<-heldReturned
				act()
			})), 2)
		})
	}()
	started.Wait()
	release() // the holding run returns: the set's lock is free
	close(heldReturned)
	testutil.Within(t, "the busy run's copy", 10*time.Second, func() { <-done })
	return v, onCaller
}

// A plain run from a busy run's copy waits its turn and runs (the copy is on
// its caller, which holds nothing of the set): it neither hangs nor panics.
func TestBusyCopyStartsPlainRun(t *testing.T) {
	w := workers.New("busy-plain", 2, workers.WithConcurrentRuns())
	defer w.Close()
	var ran atomic.Int32
	v, onCaller := busyAct(t, w, func() {
		w.RunN(tasks.Func("plain", func(int) { ran.Add(1) }), 2)
	})
	assert.Nil(t, v)
	assert.True(t, onCaller, "a busy run's copy ran on a worker")
	assert.Equal(t, int32(2), ran.Load())
}

// Close from a busy run's copy closes the set (the copy is not part of any
// run Close waits for), and later runs panic as on any closed set.
func TestBusyCopyCloses(t *testing.T) {
	w := workers.New("busy-close", 2, workers.WithConcurrentRuns())
	v, _ := busyAct(t, w, w.Close)
	assert.Nil(t, v)
	assert.PanicsWithValue(t, `workers: RunN on "busy-close": set is closed`, func() {
		w.RunN(tasks.Func("after", func(int) {}), 1)
	})
}

// Close from outside does not wait for a busy run: its copies run on its
// caller, so Close returns while one of them is still running.
func TestCloseDoesNotWaitForBusyRun(t *testing.T) {
	w := workers.New("busy-outside", 2, workers.WithConcurrentRuns())
	closed := make(chan struct{})
	var v any
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		v, _ = busyAct(t, w, func() { <-closed }) // the copy waits for Close
	}()
	time.Sleep(20 * time.Millisecond) // let the busy run reach its copy 1
	testutil.Within(t, "Close", 10*time.Second, w.Close)
	close(closed)
	wg.Wait()
	assert.Nil(t, v)
}

// The last release of an Acquired set from a busy run's copy closes the set,
// whichever copy does it: all of them run on the caller, outside every run
// that holds the set.
func TestBusyCopyLastRelease(t *testing.T) {
	s, release := workers.Acquire("busy-release", 2)
	v, onCaller := busyAct(t, s, release)
	assert.Nil(t, v, "the last release from a busy copy must close the set")
	assert.True(t, onCaller)
	assert.Zero(t, workers.SharedSets(), "released")
	assert.Panics(t, func() { s.RunN(tasks.Func("after", func(int) {}), 1) })
}

// A busy run whose caller copy calls runtime.Goexit is counted as a run and a
// busy run when it starts; its caller copies are not counted (the run never
// returned), and no counter goes down.
func TestStatsBusyRunGoexit(t *testing.T) {
	w := workers.New("busy-goexit", 2, workers.WithConcurrentRuns())
	defer w.Close()
	release := holdSet(w, 1)
	before := w.Stats()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.RunN(tasks.CallerRuns(tasks.Func("exit", func(id int) {
			if id == 0 {
				runtime.Goexit()
			}
		})), 2)
	}()
	<-done
	release()
	after := w.Stats()
	assert.Equal(t, before.BusyRuns+1, after.BusyRuns, "%v", after)
	assert.Equal(t, before.CallerCopies, after.CallerCopies, "%v", after)
}

// Caller copies are counted when their run returns, inline runs included: a
// snapshot taken inside an inline copy does not count it yet, and a copy that
// calls runtime.Goexit is never counted, so CallerCopies never goes down.
func TestStatsCallerCopiesNeverGoBack(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		var opts []workers.Option
		if concurrent {
			opts = append(opts, workers.WithConcurrentRuns())
		}
		w := workers.New("inline-goexit", 2, opts...)
		var inside workers.Stats
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.RunN(tasks.CallerRuns(tasks.Func("exit", func(int) {
				inside = w.Stats()
				runtime.Goexit()
			})), 1)
		}()
		<-done
		after := w.Stats()
		assert.Zero(t, inside.CallerCopies, "concurrent=%v: an inline copy counted before its run returned (%v)", concurrent, inside)
		assert.GreaterOrEqual(t, after.CallerCopies, inside.CallerCopies, "concurrent=%v: CallerCopies went back", concurrent)
		assert.Zero(t, after.CallerCopies, "concurrent=%v: a Goexit copy counted (%v)", concurrent, after)
		assert.Equal(t, uint64(1), after.InlineRuns)
		w.Close()
	}
}

// A busy run nested in a copy of the same set runs on that copy's goroutine,
// and a plain run from inside it still panics, naming the nested run: the
// copy holds the set (or is one of its workers) and the plain run would wait
// for it.
func TestNestedPlainRunInBusyRunPanics(t *testing.T) {
	w := workers.New("busy-nested", 2, workers.WithConcurrentRuns())
	defer w.Close()
	var v any
	testutil.Within(t, "the runs", 10*time.Second, func() {
		w.RunN(tasks.Func("outer", func(id int) {
			if id != 0 {
				return
			}
			w.RunN(tasks.CallerRuns(tasks.Func("busy", func(c int) {
				if c == 1 {
					v = panicValue(func() { w.RunN(tasks.Func("plain", func(int) {}), 1) })
				}
			})), 2)
		}), 2)
	})
	require.NotNil(t, v)
	assert.Contains(t, nestedMessage(v), "a nested run would deadlock")
}

// A panic names the call the user made, not the run underneath it.
func TestClosedPanicNamesTheCall(t *testing.T) {
	w := workers.New("named", 2)
	w.Close()
	bg := context.Background()
	for op, call := range map[string]func(){
		"ForRange":        func() { w.ForRange(4, func(int, int, int) {}) },
		"RunContext":      func() { _ = w.RunContext(bg, 2, func(context.Context, int) error { return nil }) },
		"ForRangeContext": func() { _ = w.ForRangeContext(bg, 4, func(context.Context, int, int, int) error { return nil }) },
		"RunN":            func() { w.RunN(tasks.Func("x", func(int) {}), 2) },
		"Run":             func() { w.Run(tasks.Func("x", func(int) {})) },
	} {
		assert.PanicsWithValue(t, `workers: `+op+` on "named": set is closed`, call, op)
	}
}

// A loop that finds a set with concurrent runs busy runs on its caller as one
// copy to its end, even once the set frees: so its first panic is the one
// reported, with every failed call counted, whatever the calls after it do (a
// Goexit, another panic); every chunk is still handed to a body call.
func TestBusyLoopReportsItsFirstPanic(t *testing.T) {
	for _, later := range []string{"Goexit", "panic"} {
		t.Run(later, func(t *testing.T) {
			w := workers.New("busy-first", 2, workers.WithConcurrentRuns())
			defer w.Close()
			release := holdSet(w, 2)
			defer release()
			var calls atomic.Int32
			var handed chunkLog
			o := testutil.Call(func() {
				w.ForChunks(8, func(chunks iter.Seq2[int, int]) {
					call := calls.Add(1)
					for lo, hi := range chunks {
						handed.add(lo, hi)
						switch {
						case call == 1:
							release() // the set frees while the loop runs
							panic("first")
						case later == "Goexit":
							runtime.Goexit()
						default:
							panic("later")
						}
					}
				}, workers.WithChunk(1))
			})
			require.NoError(t, handed.coversOnce(8))
			pe, ok := o.Value.(*workers.PanicError)
			require.True(t, ok, "got %+v; want the first panic as a *PanicError", o)
			assert.Equal(t, "first", pe.Value)
			assert.Equal(t, 8, pe.Panics, "every failed call counted: %v", pe)
			assert.True(t, pe.OnCaller)
		})
	}
}

// A call from a loop's body gets the same answer whichever chunk runs it. A
// loop that holds the set: a plain RunN from any of its calls panics (it
// would wait for the run it is part of). A loop that found a set with
// concurrent runs busy holds nothing, even once the set frees: a plain RunN
// from any of its calls waits its turn and runs.
func TestNestedPlainRunSameAnswerInEveryChunk(t *testing.T) {
	plain := tasks.Func("plain", func(int) {})
	t.Run("held", func(t *testing.T) {
		w := workers.New("nested-held", 2, workers.WithConcurrentRuns())
		defer w.Close()
		v := panicValue(func() { w.Do(6, func(int) { w.RunN(plain, 1) }) })
		pe, ok := v.(*workers.PanicError)
		require.True(t, ok, "got %#v; want a *PanicError", v)
		assert.Equal(t, 6, pe.Panics, "every call's nested RunN panicked: %v", pe)
		assert.Contains(t, nestedMessage(pe), "nested run would deadlock")
	})
	t.Run("busy", func(t *testing.T) {
		w := workers.New("nested-busy", 2, workers.WithConcurrentRuns())
		defer w.Close()
		release := holdSet(w, 2)
		defer release()
		var ran atomic.Int32
		w.Do(6, func(i int) {
			if i == 0 {
				release() // the set frees while the loop runs
			}
			w.RunN(plain, 1)
			ran.Add(1)
		})
		assert.Equal(t, int32(6), ran.Load(), "every call's nested RunN ran")
	})
}

// A busy ForChunks calls its body once, for its one copy, even when the set
// frees while it runs: the point of ForChunks is setup once per copy.
func TestBusyForChunksCallsItsBodyOnce(t *testing.T) {
	w := workers.New("busy-chunks", 2, workers.WithConcurrentRuns())
	defer w.Close()
	release := holdSet(w, 2)
	defer release()
	var bodies atomic.Int32
	var handed chunkLog
	w.ForChunks(64, func(chunks iter.Seq2[int, int]) {
		bodies.Add(1)
		for lo, hi := range chunks {
			release()
			handed.add(lo, hi)
		}
	}, workers.WithChunk(1))
	assert.Equal(t, int32(1), bodies.Load())
	assert.NoError(t, handed.coversOnce(64))
}
