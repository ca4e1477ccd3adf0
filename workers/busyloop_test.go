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

// A loop that found the set busy runs on its caller only while the set is
// busy: once the run that held it returns, the rest of the loop is a run on
// the set, and workers claim its chunks.
func TestBusyLoopTakesTheSetOnceFree(t *testing.T) {
	for _, tc := range busyLoops {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("busy-loop", 2, workers.WithConcurrentRuns())
			defer w.Close()
			release := holdSet(w, 2)
			held := w.Stats()
			me := goid.Get()
			const n = 200
			hits := make([]atomic.Int32, n)
			var offCaller atomic.Int32
			// The caller's chunks after the first wait (up to a deadline, so
			// that the test fails rather than hangs) until a chunk ran
			// elsewhere: on a worker, which only a run on the set can give.
			deadline := time.Now().Add(5 * time.Second)
			tc.loop(w, n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
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
			for i := range hits {
				require.Equal(t, int32(1), hits[i].Load(), "iteration %d", i)
			}
			assert.NotZero(t, offCaller.Load(), "no chunk ran off the caller after the set freed")
			st := w.Stats()
			assert.Equal(t, uint64(1), st.BusyRuns, "%v", st)
			assert.Greater(t, st.WorkerCopies, held.WorkerCopies, "%v", st)
		})
	}
}

// A busy loop whose set is closed while it runs on its caller finishes
// there: every iteration once, no panic, nothing on a worker.
func TestBusyLoopFinishesAfterClose(t *testing.T) {
	for _, tc := range busyLoops {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("busy-loop-close", 2, workers.WithConcurrentRuns())
			release := holdSet(w, 2)
			const n = 50
			hits := make([]atomic.Int32, n)
			var offCaller atomic.Int32
			first := make(chan struct{})
			var closed atomic.Bool
			done := make(chan any)
			go func() {
				me := goid.Get()
				done <- panicValue(func() {
					tc.loop(w, n, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							hits[i].Add(1)
						}
						if goid.Get() != me {
							offCaller.Add(1)
						}
						if lo == 0 {
							close(first)
							// Wait for Close (a bounded wait: Close may
							// instead wait for this loop's rest).
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
			for i := range hits {
				assert.Equal(t, int32(1), hits[i].Load(), "iteration %d", i)
			}
			assert.Zero(t, offCaller.Load(), "chunks ran on workers of a closed set")
		})
	}
}

// A panic in a chunk of a busy loop's rest, on whichever goroutine, is
// raised at the caller once every other iteration has run, and the set
// stays usable.
func TestBusyLoopPanicInRest(t *testing.T) {
	for _, tc := range busyLoops {
		if tc.stops {
			continue // its other calls stop: not every iteration runs
		}
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("busy-loop-panic", 2, workers.WithConcurrentRuns())
			defer w.Close()
			release := holdSet(w, 2)
			const n = 100
			hits := make([]atomic.Int32, n)
			v := panicValue(func() {
				tc.loop(w, n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						hits[i].Add(1)
					}
					if lo == 0 {
						release()
					}
					if lo == n/2 {
						panic("chunk")
					}
				})
			})
			pe, ok := v.(*workers.PanicError)
			require.True(t, ok, "got %T %v; want *workers.PanicError", v, v)
			assert.Equal(t, "chunk", pe.Value)
			for i := range hits {
				assert.Equal(t, int32(1), hits[i].Load(), "iteration %d", i)
			}
			var calls atomic.Int32
			w.ForRange(10, func(_, lo, hi int) { calls.Add(int32(hi - lo)) })
			assert.Equal(t, int32(10), calls.Load())
		})
	}
}

// A copy of a busy loop that calls runtime.Goexit ends its caller only once
// the loop's other iterations have run, even if the set frees meanwhile.
func TestBusyLoopGoexit(t *testing.T) {
	for _, tc := range busyLoops {
		if tc.stops {
			continue // its other calls stop: not every iteration runs
		}
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("busy-loop-goexit", 2, workers.WithConcurrentRuns())
			defer w.Close()
			release := holdSet(w, 2)
			const n = 50
			hits := make([]atomic.Int32, n)
			returned := make(chan bool)
			go func() {
				ok := false
				defer func() { returned <- ok }()
				tc.loop(w, n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						hits[i].Add(1)
					}
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
			for i := range hits {
				assert.Equal(t, int32(1), hits[i].Load(), "iteration %d", i)
			}
		})
	}
}

// A busy ForChunks whose body does not range over its chunks panics as
// ForChunks documents, whether or not the set freed meanwhile: a watch that
// took the unclaimed chunks for a stop would run the loop again and again.
func TestBusyForChunksUnrangedBody(t *testing.T) {
	w := workers.New("busy-chunks-unranged", 2, workers.WithConcurrentRuns())
	defer w.Close()
	release := holdSet(w, 2)
	done := make(chan any)
	go func() {
		done <- panicValue(func() {
			w.ForChunks(10, func(iter.Seq2[int, int]) { release() }, workers.WithChunk(1))
		})
	}()
	var v any
	testutil.Within(t, "the busy ForChunks", 10*time.Second, func() { v = <-done })
	assert.Contains(t, fmt.Sprint(v), "never claimed")
}
