package workers_test

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/workers"
)

// busyLoops are the loops whose busy runs take the set once it frees: each
// calls body(lo, hi) for chunks of one iteration over [0, n).
var busyLoops = []struct {
	name string
	loop func(w *workers.Workers, n int, body func(lo, hi int))
	// stops: a panic or Goexit in one call stops the loop's other calls
	// (ForRangeContext cancels its context)
	stops bool
}{
	{"ForRange", func(w *workers.Workers, n int, body func(lo, hi int)) {
		w.ForRange(n, func(_, lo, hi int) { body(lo, hi) }, workers.WithChunk(1))
	}, false},
	{"Do", func(w *workers.Workers, n int, body func(lo, hi int)) {
		w.Do(n, func(i int) { body(i, i+1) })
	}, false},
	{"ForChunks", func(w *workers.Workers, n int, body func(lo, hi int)) {
		w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
			for lo, hi := range chunks {
				body(lo, hi)
			}
		}, workers.WithChunk(1))
	}, false},
	{"ForRangeContext", func(w *workers.Workers, n int, body func(lo, hi int)) {
		_ = w.ForRangeContext(context.Background(), n, func(_ context.Context, _, lo, hi int) error {
			body(lo, hi)
			return nil
		}, workers.WithChunk(1))
	}, true},
	{"RunContext", func(w *workers.Workers, n int, body func(lo, hi int)) {
		_ = w.RunContext(context.Background(), n, func(_ context.Context, i int) error {
			body(i, i+1)
			return nil
		})
	}, false},
}

// eachBusyLoop runs test for each of busyLoops (with drains, only those
// whose other calls go on after one failed) on a set with concurrent runs
// that another goroutine's run holds until release.
func eachBusyLoop(t *testing.T, drains bool, test func(t *testing.T, w *workers.Workers, loop func(n int, body func(lo, hi int)), release func())) {
	for _, tc := range busyLoops {
		if drains && tc.stops {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("busy-"+tc.name, 2, workers.WithConcurrentRuns())
			defer w.Close()
			test(t, w, func(n int, body func(lo, hi int)) { tc.loop(w, n, body) }, holdSet(w, 2))
		})
	}
}

// hit counts one run of each iteration of [lo, hi).
func hit(hits []atomic.Int32, lo, hi int) {
	for i := lo; i < hi; i++ {
		hits[i].Add(1)
	}
}

// A loop that found the set busy runs on its caller only while the set is
// busy: once the run that held it returns, the rest of the loop is a run on
// the set, and workers claim its chunks.
func TestBusyLoopTakesTheSetOnceFree(t *testing.T) {
	eachBusyLoop(t, false, func(t *testing.T, w *workers.Workers, loop func(int, func(lo, hi int)), release func()) {
		held := w.Stats()
		me := goid.Get()
		hits := make([]atomic.Int32, 200)
		var offCaller atomic.Int32
		// The caller's chunks after the first wait (up to a deadline, so
		// that the test fails rather than hangs) until a chunk ran
		// elsewhere: on a worker, which only a run on the set can give.
		deadline := time.Now().Add(5 * time.Second)
		loop(len(hits), func(lo, hi int) {
			hit(hits, lo, hi)
			switch {
			case goid.Get() != me:
				offCaller.Add(1)
			case lo == 0:
				release() // returns once the holding run has returned
			default:
				for offCaller.Load() == 0 && time.Now().Before(deadline) {
					time.Sleep(50 * time.Microsecond)
				}
			}
		})
		assertEachOnce(t, hits)
		assert.NotZero(t, offCaller.Load(), "no chunk ran off the caller after the set freed")
		st := w.Stats()
		assert.Equal(t, uint64(1), st.BusyRuns, "%v", st)
		assert.Greater(t, st.WorkerCopies, held.WorkerCopies, "%v", st)
		assert.Equal(t, uint64(2), st.CallerCopies+st.WorkerCopies-held.CallerCopies-held.WorkerCopies,
			"the loop's two copies, each counted once: %v", st)
	})
}

// A busy loop whose set is closed while it runs on its caller finishes
// there: every iteration once, no panic, nothing on a worker.
func TestBusyLoopFinishesAfterClose(t *testing.T) {
	eachBusyLoop(t, false, func(t *testing.T, w *workers.Workers, loop func(int, func(lo, hi int)), release func()) {
		hits := make([]atomic.Int32, 50)
		var offCaller atomic.Int32
		first := make(chan struct{})
		var closed atomic.Bool
		done := make(chan any)
		go func() {
			me := goid.Get()
			done <- panicValue(func() {
				loop(len(hits), func(lo, hi int) {
					hit(hits, lo, hi)
					if goid.Get() != me {
						offCaller.Add(1)
					}
					if lo == 0 {
						close(first)
						// Wait for Close (a bounded wait: Close may instead
						// wait for this loop's rest).
						for deadline := time.Now().Add(time.Second); !closed.Load() && time.Now().Before(deadline); {
							time.Sleep(50 * time.Microsecond)
						}
					}
				})
			})
		}()
		<-first
		release()
		w.Close()
		closed.Store(true)
		var v any
		testutil.Within(t, "the busy loop", 10*time.Second, func() { v = <-done })
		assert.Nil(t, v)
		assertEachOnce(t, hits)
		assert.Zero(t, offCaller.Load(), "chunks ran on workers of a closed set")
	})
}

// A panic in a chunk of a busy loop's rest, on whichever goroutine, is
// raised at the caller once every other iteration has run, and the set
// stays usable.
func TestBusyLoopPanicInRest(t *testing.T) {
	eachBusyLoop(t, true, func(t *testing.T, w *workers.Workers, loop func(int, func(lo, hi int)), release func()) {
		hits := make([]atomic.Int32, 100)
		v := panicValue(func() {
			loop(len(hits), func(lo, hi int) {
				hit(hits, lo, hi)
				if lo == 0 {
					release()
				}
				if lo == len(hits)/2 {
					panic("chunk")
				}
			})
		})
		pe, ok := v.(*workers.PanicError)
		require.True(t, ok, "got %T %v; want *workers.PanicError", v, v)
		assert.Equal(t, "chunk", pe.Value)
		assertEachOnce(t, hits)
		var calls atomic.Int32
		w.ForRange(10, func(_, lo, hi int) { calls.Add(int32(hi - lo)) })
		assert.Equal(t, int32(10), calls.Load())
	})
}

// A copy of a busy loop that panics on the caller just as the set frees
// does not end the loop: the copies after it drain it (they do not stop for
// the watch, which would leave the loop to passes that claim nothing).
func TestBusyLoopPanicAsSetFrees(t *testing.T) {
	eachBusyLoop(t, true, func(t *testing.T, w *workers.Workers, loop func(int, func(lo, hi int)), release func()) {
		hits := make([]atomic.Int32, 50)
		var v any
		testutil.Within(t, "the busy loop", 10*time.Second, func() {
			v = panicValue(func() {
				loop(len(hits), func(lo, hi int) {
					hit(hits, lo, hi)
					if lo == 0 {
						release()
						panic("chunk")
					}
				})
			})
		})
		pe, ok := v.(*workers.PanicError)
		require.True(t, ok, "got %T %v; want *workers.PanicError", v, v)
		assert.Equal(t, "chunk", pe.Value)
		assertEachOnce(t, hits)
	})
}

// A copy of a busy loop that calls runtime.Goexit ends its caller only once
// the loop's other iterations have run, even if the set frees meanwhile.
func TestBusyLoopGoexit(t *testing.T) {
	eachBusyLoop(t, true, func(t *testing.T, w *workers.Workers, loop func(int, func(lo, hi int)), release func()) {
		hits := make([]atomic.Int32, 50)
		returned := make(chan bool)
		go func() {
			ok := false
			defer func() { returned <- ok }()
			loop(len(hits), func(lo, hi int) {
				hit(hits, lo, hi)
				if lo == 0 {
					release()
					runtime.Goexit()
				}
			})
			ok = true
		}()
		var ok bool
		testutil.Within(t, "the busy loop", 10*time.Second, func() { ok = <-returned })
		assert.False(t, ok, "the Goexit proceeds")
		assertEachOnce(t, hits)
	})
}

// A busy ForChunks whose bodies stop ranging early panics as on a free set,
// whether the set stays busy or frees meanwhile: its bodies are not called
// again and again until the loop happens to drain (or, with bodies that
// never range, forever).
func TestBusyForChunksStopsEarly(t *testing.T) {
	for _, frees := range []bool{false, true} {
		t.Run(fmt.Sprint("frees=", frees), func(t *testing.T) {
			w := workers.New("busy-chunks-early", 2, workers.WithConcurrentRuns())
			defer w.Close()
			release := holdSet(w, 2)
			defer release()
			const n, copies = 50, 2
			var calls atomic.Int32
			v := panicValue(func() {
				w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
					c := calls.Add(1)
					for lo := range chunks {
						if frees && lo == 0 {
							release()
						}
						if c <= 10 { // later calls range to the end, so that no loop spins for ever
							break
						}
					}
				}, workers.WithChunk(1), workers.WithCopies(copies))
			})
			assert.Contains(t, fmt.Sprint(v), "never claimed")
			assert.LessOrEqual(t, calls.Load(), int32(2*copies), "bodies called")
		})
	}
}

// When the set frees under a busy loop's first copies and is taken again
// before its last copy, which then calls runtime.Goexit (after another copy
// panicked, or not), the loop's other iterations still run before the Goexit
// proceeds (with the other copy's panic raised first).
func TestBusyLoopLastCopyExits(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprint("panics=", panics), func(t *testing.T) {
			w := workers.New("busy-loop-exit", 3, workers.WithConcurrentRuns())
			defer w.Close()
			release := holdSet(w, 3)
			var again func() // the second hold, taken by the loop's first copy
			defer func() { again() }()
			const n = 50
			copies := int32(2)
			if panics {
				copies = 3
			}
			hits := make([]atomic.Int32, n)
			var calls atomic.Int32
			var v any // recovered where the Goexit would go on (it does after the recover)
			returned := false
			testutil.Within(t, "the busy loop", 10*time.Second, func() {
				done := make(chan struct{})
				go func() {
					defer close(done)
					defer func() { v = recover() }()
					w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
						c := calls.Add(1)
						for lo, hi := range chunks {
							hit(hits, lo, hi)
							switch {
							case c == 1:
								release() // copy 0 stops claiming
							case c == copies:
								runtime.Goexit()
							case c > 1 && c < copies:
								panic("chunk")
							}
						}
						if c == 1 {
							again = holdSet(w, 3) // the next copies claim again
						}
					}, workers.WithChunk(1), workers.WithCopies(int(copies)))
					returned = true
				}()
				<-done
			})
			assert.False(t, returned, "the Goexit proceeds")
			if panics {
				pe, ok := v.(*workers.PanicError)
				require.True(t, ok, "got %T %v; want *workers.PanicError", v, v)
				assert.Equal(t, "chunk", pe.Value)
			} else {
				assert.Nil(t, v)
			}
			assertEachOnce(t, hits)
		})
	}
}

// A busy ForChunks body may range over its chunks from goroutines of its
// own: they stop for the watch at once without a race (run with -race).
func TestBusyForChunksRangedFromGoroutines(t *testing.T) {
	w := workers.New("busy-chunks-goroutines", 2, workers.WithConcurrentRuns())
	defer w.Close()
	release := holdSet(w, 2)
	const n = 100
	hits := make([]atomic.Int32, n)
	var calls atomic.Int32
	var freed atomic.Bool
	w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
		if calls.Add(1) > 1 {
			for lo, hi := range chunks {
				hit(hits, lo, hi)
			}
			return
		}
		testutil.RunCopies(2, func(int) {
			for lo := range chunks { // chunks of one
				hits[lo].Add(1)
				if lo == 0 {
					release()
					freed.Store(true)
				}
				// Both goroutines claim again only once the set is free.
				for deadline := time.Now().Add(5 * time.Second); !freed.Load() && time.Now().Before(deadline); {
					time.Sleep(50 * time.Microsecond)
				}
			}
		})
	}, workers.WithChunk(1), workers.WithCopies(2))
	assertEachOnce(t, hits)
}

// assertEachOnce checks that every iteration ran exactly once.
func assertEachOnce(t *testing.T, hits []atomic.Int32) {
	t.Helper()
	var wrong []int
	for i := range hits {
		if hits[i].Load() != 1 {
			wrong = append(wrong, i)
		}
	}
	assert.Empty(t, wrong, "iterations not run exactly once")
}
