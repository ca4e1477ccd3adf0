package workers_test

import (
	"context"
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

func TestForRangeCoversEachIterationOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		opts   []workers.RangeOption
		copies int // 0: ActiveWorkers
		max    int
	}{
		{"empty", 0, nil, 0, 2},
		{"one", 1, nil, 0, 2},
		{"default chunk", 10000, nil, 0, 3},
		{"chunk 1", 500, opts(workers.WithChunk(1)), 0, 3},
		{"ragged chunk", 1001, opts(workers.WithChunk(10)), 0, 2},
		{"fewer chunks than workers", 10, opts(workers.WithChunk(5)), 0, 4},
		{"explicit copies", 1000, opts(workers.WithCopies(2)), 2, 4},
		{"workers only", 10000, opts(workers.WithWorkersOnly()), 0, 2},
		{"workers only one chunk", 50, opts(workers.WithChunk(64), workers.WithWorkersOnly()), 0, 2},
		{"workers only one copy", 1000, opts(workers.WithCopies(1), workers.WithWorkersOnly()), 1, 2},
		{"one chunk", 50, opts(workers.WithChunk(64)), 0, 2},
		{"one copy", 1000, opts(workers.WithCopies(1)), 1, 2},
		{"guided", 10000, opts(workers.WithGuided(1)), 0, 3},
		{"guided min chunk", 1001, opts(workers.WithGuided(100)), 0, 2},
		{"guided workers only", 10000, opts(workers.WithGuided(4), workers.WithWorkersOnly()), 0, 2},
		{"guided fewer chunks than workers", 10, opts(workers.WithGuided(5)), 0, 4},
		{"guided MaxInt", 1000, opts(workers.WithGuided(math.MaxInt)), 0, 2},
		{"chunk after guided wins", 1000, opts(workers.WithGuided(1), workers.WithChunk(999)), 0, 2},
		{"guided after chunk wins", 1000, opts(workers.WithChunk(1), workers.WithGuided(999)), 0, 2},
		{"last option wins", 1000, opts(workers.WithChunk(1), workers.WithChunk(999)), 0, 2},
		{"chunk MaxInt", 1000, opts(workers.WithChunk(math.MaxInt)), 0, 2},
		{"chunk MaxInt/2+1 on 3 copies", 10, opts(workers.WithChunk(math.MaxInt/2+1), workers.WithCopies(3)), 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("forrange", tc.max)
			defer w.Close()
			hits := make([]atomic.Int32, tc.n)
			var maxID atomic.Int32
			maxID.Store(-1)
			body := func(worker, lo, hi int) {
				for {
					m := maxID.Load()
					if int32(worker) <= m || maxID.CompareAndSwap(m, int32(worker)) {
						break
					}
				}
				if lo >= hi {
					t.Errorf("empty chunk [%d, %d)", lo, hi) // not require: this runs off the test goroutine
				}
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			}
			for round := range 5 {
				w.ForRange(tc.n, body, tc.opts...)
				for i := range hits {
					if got := hits[i].Swap(0); got != 1 {
						t.Fatalf("round %d: iteration %d ran %d times; want 1", round, i, got)
					}
				}
			}
			copies := tc.copies
			if copies == 0 {
				copies = w.ActiveWorkers()
			}
			assert.Less(t, int(maxID.Load()), copies, "worker ids stay below the copy count")
		})
	}
}

func opts(o ...workers.RangeOption) []workers.RangeOption { return o }

// ForRange with a chunk of MaxInt once panicked with RunN's "n = 0" message:
// the chunk count overflowed.
func TestForRangeHugeChunk(t *testing.T) {
	w := workers.New("huge", 3)
	defer w.Close()
	chunks := []int{math.MaxInt, math.MaxInt - 1, math.MaxInt/2 + 1}
	if c := int64(1<<31 + 1); c <= math.MaxInt { // just past int32's range, so only where int has 64 bits
		chunks = append(chunks, int(c))
	}
	for _, chunk := range chunks {
		var calls, covered atomic.Int64
		w.ForRange(10, func(_, lo, hi int) {
			calls.Add(1)
			covered.Add(int64(hi - lo))
			if lo != 0 || hi != 10 {
				t.Errorf("chunk %d: got [%d, %d); want [0, 10)", chunk, lo, hi)
			}
		}, workers.WithChunk(chunk), workers.WithCopies(3))
		assert.Equal(t, int64(1), calls.Load(), "chunk %d: one chunk", chunk)
		assert.Equal(t, int64(10), covered.Load(), "chunk %d", chunk)
	}
}

func TestForRangeCallerRunsInline(t *testing.T) {
	w := workers.New("inline", 2)
	defer w.Close()
	caller := goid.Get()
	var on []uint64
	// One chunk (caller-runs by default): one copy, run inline on the caller.
	w.ForRange(10, func(_, _, _ int) { on = append(on, goid.Get()) }, workers.WithChunk(10))
	require.Equal(t, []uint64{caller}, on)
	on = nil
	w.ForRange(10, func(_, _, _ int) { on = append(on, goid.Get()) }, workers.WithGuided(10))
	require.Equal(t, []uint64{caller}, on)
	assert.Equal(t, 0, w.CreatedWorkers(), "no worker was needed")
	assert.Equal(t, uint64(2), w.Stats().InlineRuns)
}

// By default the caller runs copies: a loop of many chunks runs at least its
// first copy on the calling goroutine.
func TestForRangeDefaultRunsOnCaller(t *testing.T) {
	w := workers.New("default", 2)
	defer w.Close()
	for _, o := range [][]workers.RangeOption{nil, opts(workers.WithGuided(1)), opts(workers.WithChunk(1))} {
		before := w.Stats().CallerCopies
		w.ForRange(1000, func(_, _, _ int) {})
		assert.Greater(t, w.Stats().CallerCopies, before, "options %v: no copy ran on the caller", o)
	}
}

// WithWorkersOnly keeps every body call off the calling goroutine, for one
// copy and one chunk too (no inline run).
func TestForRangeWorkersOnly(t *testing.T) {
	w := workers.New("only", 3)
	defer w.Close()
	caller := goid.Get()
	for _, o := range [][]workers.RangeOption{
		nil,
		opts(workers.WithCopies(1)),
		opts(workers.WithChunk(1 << 20)),
		opts(workers.WithGuided(1)),
		opts(workers.WithGuided(1 << 20)),
	} {
		var onCaller, calls atomic.Int32
		body := func(_, _, _ int) {
			calls.Add(1)
			if goid.Get() == caller {
				onCaller.Add(1)
			}
		}
		for range 20 {
			w.ForRange(1000, body, append(o, workers.WithWorkersOnly())...)
			require.NoError(t, w.ForRangeContext(context.Background(), 1000, func(_ context.Context, worker, lo, hi int) error {
				body(worker, lo, hi)
				return nil
			}, append(o, workers.WithWorkersOnly())...))
		}
		assert.Positive(t, calls.Load())
		assert.Zero(t, onCaller.Load(), "options %v: body calls on the caller", o)
	}
	assert.Zero(t, w.Stats().CallerCopies)
}

// A guided loop's chunks shrink: the first claimed chunk is the largest, and
// every chunk but the last has at least minChunk iterations.
func TestForRangeGuidedChunks(t *testing.T) {
	w := workers.New("guided", 2)
	defer w.Close()
	var mu sync.Mutex
	var sizes [][2]int
	w.ForRange(10000, func(_, lo, hi int) {
		mu.Lock()
		sizes = append(sizes, [2]int{lo, hi})
		mu.Unlock()
	}, workers.WithGuided(16), workers.WithCopies(2)) // two copies on any machine
	slices.SortFunc(sizes, func(a, b [2]int) int { return a[0] - b[0] })
	require.NotEmpty(t, sizes)
	assert.Equal(t, [2]int{0, 10000 / 4}, sizes[0], "first chunk: remaining/(2*copies)")
	for i, c := range sizes[:len(sizes)-1] {
		assert.GreaterOrEqual(t, c[1]-c[0], 16, "chunk %d %v below minChunk", i, c)
	}
	assert.Equal(t, 10000, sizes[len(sizes)-1][1])
}

func TestForRangeVisibility(t *testing.T) {
	w := workers.New("vis", 2)
	defer w.Close()
	xs := make([]int, 100000)
	w.ForRange(len(xs), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			xs[i] = i * 2
		}
	})
	for i, x := range xs { // plain reads after ForRange: the race detector checks the ordering
		if x != i*2 {
			t.Fatalf("xs[%d] = %d; want %d", i, x, i*2)
		}
	}
}

func TestForRangePanicPropagates(t *testing.T) {
	w := workers.New("panic", 2)
	defer w.Close()
	var pe *workers.PanicError
	func() {
		defer func() {
			var ok bool
			pe, ok = recover().(*workers.PanicError)
			require.True(t, ok, "ForRange re-raises a *PanicError")
		}()
		w.ForRange(100, func(_, lo, _ int) {
			if lo == 0 {
				panic("boom")
			}
		}, workers.WithChunk(10))
	}()
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, "workers.ForRange", pe.Task)
	// The set stays usable.
	var sum atomic.Int64
	w.ForRange(10, func(_, lo, hi int) { sum.Add(int64(hi - lo)) })
	assert.Equal(t, int64(10), sum.Load())
}

func TestForRangeMisuse(t *testing.T) {
	w := workers.New("misuse", 2)
	defer w.Close()
	body := func(_, _, _ int) {}
	for _, tc := range []struct {
		name string
		call func()
		want string
	}{
		{"negative n", func() { w.ForRange(-1, body) }, `workers: ForRange on "misuse": negative length -1`},
		{"nil body", func() { w.ForRange(1, nil) }, `workers: ForRange on "misuse": nil body`},
		{"zero option", func() { w.ForRange(1, body, workers.WithChunk(1), workers.RangeOption{}) }, `workers: ForRange on "misuse": option 1 is the zero RangeOption`},
		{"negative chunk", func() { w.ForRange(1, body, workers.WithChunk(-1)) }, `workers: ForRange on "misuse": WithChunk(-1): chunk < 1`},
		{"zero chunk", func() { w.ForRange(1, body, workers.WithChunk(0)) }, `workers: ForRange on "misuse": WithChunk(0): chunk < 1`},
		{"zero guided", func() { w.ForRange(1, body, workers.WithGuided(0)) }, `workers: ForRange on "misuse": WithGuided(0): minChunk < 1`},
		{"negative guided", func() { w.ForRange(0, body, workers.WithGuided(-3)) }, `workers: ForRange on "misuse": WithGuided(-3): minChunk < 1`},
		{"too many copies", func() { w.ForRange(1, body, workers.WithCopies(3)) }, `workers: ForRange on "misuse": WithCopies(3) out of range [1, 2]; a loop needs no more copies than workers (a smaller WithChunk balances finer)`},
		{"negative copies", func() { w.ForRange(1, body, workers.WithCopies(-1)) }, `workers: ForRange on "misuse": WithCopies(-1) out of range [1, 2]`},
		{"zero copies", func() { w.ForRange(0, body, workers.WithCopies(0)) }, `workers: ForRange on "misuse": WithCopies(0) out of range [1, 2]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.PanicsWithValue(t, tc.want, tc.call)
		})
	}
}

func TestForRangeAllocatesNothing(t *testing.T) {
	w := workers.New("alloc", 2)
	defer w.Close()
	var sink atomic.Int64
	body := func(_, lo, hi int) { sink.Add(int64(hi - lo)) }
	for _, tc := range []struct {
		name string
		call func()
	}{
		{"no options", func() { w.ForRange(1000, body) }},
		// AllocsPerRun runs at GOMAXPROCS 1, where a loop plans one copy:
		// WithCopies(2) keeps two and the default schedule's chunks.
		{"two copies", func() { w.ForRange(1000, body, workers.WithCopies(2)) }},
		{"workers only", func() { w.ForRange(1000, body, workers.WithWorkersOnly()) }},
		{"guided", func() { w.ForRange(1000, body, workers.WithGuided(4)) }},
		{"all options", func() {
			w.ForRange(1000, body, workers.WithChunk(7), workers.WithGuided(3), workers.WithCopies(2), workers.WithWorkersOnly())
		}},
	} {
		tc.call() // warm the pool and create the workers
		if got := testing.AllocsPerRun(100, tc.call); got != 0 {
			t.Errorf("ForRange with %s: %v allocations per call; want 0", tc.name, got)
		}
	}
}

// Do is the fork-join of go + sync.WaitGroup on the set: fn(i) for every i,
// the caller taking part.
func ExampleWorkers_Do() {
	w := workers.New("parts", 2)
	defer w.Close()

	parts := make([]int, 4)
	w.Do(len(parts), func(i int) {
		parts[i] = 10 * i // each call writes only its own element
	})
	fmt.Println(parts)
	// Output: [0 10 20 30]
}

// ForChunks gives each copy its chunks to range over, so that scratch
// memory is made once per copy, not once per chunk.
func ExampleWorkers_ForChunks() {
	w := workers.New("rows", 2)
	defer w.Close()

	rows := make([][]int, 6)
	w.ForChunks(len(rows), func(chunks iter.Seq2[int, int]) {
		scratch := make([]int, 3) // once per copy
		for lo, hi := range chunks {
			for r := lo; r < hi; r++ {
				for j := range scratch {
					scratch[j] = r + j
				}
				rows[r] = slices.Clone(scratch)
			}
		}
	}, workers.WithChunk(2))
	fmt.Println(rows)
	// Output: [[0 1 2] [1 2 3] [2 3 4] [3 4 5] [4 5 6] [5 6 7]]
}

// ForRange splits [0, n) into chunks that the copies claim one at a time;
// body gets the bounds of each chunk and the id of the copy running it.
func ExampleWorkers_ForRange() {
	w := workers.New("loop", 2)
	defer w.Close()

	squares := make([]int, 10)
	w.ForRange(len(squares), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			squares[i] = i * i
		}
	}, workers.WithChunk(3))
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

// BenchmarkForRange is one ForRange of 1024 trivial iterations on the whole
// set: the cost of the loop machinery beyond a plain run, for the default
// (workers+caller), WithWorkersOnly (workers), the guided schedule and
// chunks of one iteration (chunk=1: a claim and a body call per iteration,
// as schedule(dynamic,1)).
func BenchmarkForRange(b *testing.B) {
	for _, n := range parallelisms() {
		for _, mode := range []struct {
			name string
			opts []workers.RangeOption
		}{
			{"workers", opts(workers.WithWorkersOnly())},
			{"workers+caller", nil},
			{"guided", opts(workers.WithGuided(16))},
			{"chunk=1", opts(workers.WithChunk(1))},
		} {
			b.Run(fmt.Sprintf("n=%d/%s", n, mode.name), func(b *testing.B) {
				w := workers.New("bench", n)
				defer w.Close()
				var sink atomic.Int64
				body := func(_, lo, hi int) { sink.Add(int64(hi - lo)) }
				opts := mode.opts
				w.ForRange(1024, body, opts...)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					w.ForRange(1024, body, opts...)
				}
			})
		}
	}
}

func TestDoCallsEachIndexOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		opts []workers.Option
	}{
		{"none", 0, nil},
		{"one", 1, nil},
		{"two", 2, nil},
		{"many", 1000, nil},
		{"concurrent runs", 100, []workers.Option{workers.WithConcurrentRuns()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("do", 3, tc.opts...)
			defer w.Close()
			hits := make([]atomic.Int32, tc.n)
			for round := range 3 {
				w.Do(tc.n, func(i int) { hits[i].Add(1) })
				for i := range hits {
					if got := hits[i].Swap(0); got != 1 {
						t.Fatalf("round %d: fn(%d) ran %d times; want 1", round, i, got)
					}
				}
			}
		})
	}
}

func TestDoPanicNamesTheIndex(t *testing.T) {
	w := workers.New("do", 2)
	defer w.Close()
	v := panicValue(func() {
		w.Do(100, func(i int) {
			if i == 37 {
				panic("boom")
			}
		})
	})
	pe, ok := v.(*workers.PanicError)
	require.True(t, ok, "got %#v; want a *workers.PanicError", v)
	assert.Equal(t, 37, pe.Worker, "the i that panicked")
	assert.Equal(t, "workers.Do", pe.Task)
	assert.Equal(t, "boom", pe.Value)
	var hits atomic.Int32
	w.Do(5, func(int) { hits.Add(1) })
	assert.Equal(t, int32(5), hits.Load(), "the set stays usable")
}

func TestDoAndForChunksMisuse(t *testing.T) {
	w := workers.New("m", 2)
	defer w.Close()
	assert.PanicsWithValue(t, `workers: Do on "m": negative length -1`, func() { w.Do(-1, func(int) {}) })
	assert.PanicsWithValue(t, `workers: Do on "m": nil body`, func() { w.Do(1, nil) })
	assert.PanicsWithValue(t, `workers: ForChunks on "m": nil body`, func() { w.ForChunks(1, nil) })
	assert.PanicsWithValue(t,
		`workers: ForChunks on "m": a body returned before ranging over its chunks to the end: every call must range over its chunks until they run out`,
		func() {
			w.ForChunks(10, func(chunks iter.Seq2[int, int]) {
				for range chunks {
					break
				}
			}, workers.WithChunk(1), workers.WithCopies(1))
		})
}

// ForChunks runs body once per copy, so state made at its top is made once
// per copy, however many chunks the copy claims.
func TestForChunksBodyOncePerCopy(t *testing.T) {
	w := workers.New("chunks", 3, workers.WithConcurrentRuns())
	defer w.Close()
	const n = 1000
	hits := make([]atomic.Int32, n)
	var bodies atomic.Int32
	var kept iter.Seq2[int, int]
	var keptMu sync.Mutex
	w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
		bodies.Add(1)
		scratch := 0 // per-copy state: no other copy sees it
		for lo, hi := range chunks {
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
				scratch++
			}
		}
		keptMu.Lock()
		kept = chunks
		keptMu.Unlock()
	}, workers.WithChunk(7))
	for i := range hits {
		require.Equal(t, int32(1), hits[i].Load(), "iteration %d", i)
	}
	assert.LessOrEqual(t, int(bodies.Load()), w.ActiveWorkers(), "one body call per copy")
	assert.GreaterOrEqual(t, int(bodies.Load()), 1)
	for lo, hi := range kept {
		t.Errorf("an iterator kept past its run yielded [%d, %d); want nothing", lo, hi)
	}
}

// A loop's default copies follow GOMAXPROCS down: a program that lowers it
// gets no more copies than processors.
func TestLoopCopiesFollowGOMAXPROCS(t *testing.T) {
	w := workers.New("procs", 4)
	defer w.Close()
	maxID := func(call func(body func(worker, lo, hi int))) int32 {
		var m atomic.Int32
		call(func(worker, lo, hi int) {
			for c := m.Load(); int32(worker) > c && !m.CompareAndSwap(c, int32(worker)); c = m.Load() {
			}
		})
		return m.Load()
	}
	prev := runtime.GOMAXPROCS(1)
	defer func() { runtime.GOMAXPROCS(prev); spin.Refresh() }()
	spin.Refresh()
	for range 20 {
		id := maxID(func(body func(worker, lo, hi int)) { w.ForRange(4000, body, workers.WithChunk(1)) })
		require.Equal(t, int32(0), id, "GOMAXPROCS 1: one copy")
	}
	id := maxID(func(body func(worker, lo, hi int)) {
		w.ForRange(4000, body, workers.WithChunk(1), workers.WithCopies(4))
	})
	assert.LessOrEqual(t, id, int32(3), "WithCopies still decides")
}

// panicSite panics with v; a loop's PanicError's Stack must show it.
//
//go:noinline
func panicSite(v any) { panic(v) }

// TestLoopPanicStackShowsTheSite checks that a loop's failed call keeps the
// stack of its panic (a copy protects a pass over its chunks, so the panic
// unwinds that pass), names its i, and that every other i still runs once.
func TestLoopPanicStackShowsTheSite(t *testing.T) {
	for _, size := range []int{1, 2} { // one copy: the copy that panicked goes on
		w := workers.New("site", size)
		defer w.Close()
		testLoopPanicSite(t, w)
	}
}

func testLoopPanicSite(t *testing.T, w *workers.Workers) {
	const n, bad = 64, 40
	// On the workers only, the failed call is not the caller's.
	v := panicValue(func() {
		w.ForRange(n, func(_, lo, _ int) {
			if lo == bad {
				panicSite("boom")
			}
		}, workers.WithWorkersOnly(), workers.WithChunk(1))
	})
	pe, ok := v.(*workers.PanicError)
	require.True(t, ok, "got %#v; want a *workers.PanicError", v)
	assert.False(t, pe.OnCaller, "workers only: a worker's call")
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		worker bool // PanicError.Worker is the i
		run    func(f func(i int))
	}{
		{"ForRange chunk=1", false, func(f func(int)) {
			w.ForRange(n, func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					f(i)
				}
			}, workers.WithChunk(1))
		}},
		{"Do", true, func(f func(int)) { w.Do(n, f) }},
		{"RunContext", true, func(f func(int)) {
			_ = w.RunContext(ctx, n, func(_ context.Context, i int) error { f(i); return nil })
		}},
		{"ForRangeContext chunk=1", false, func(f func(int)) {
			_ = w.ForRangeContext(ctx, n, func(_ context.Context, _, lo, hi int) error {
				for i := lo; i < hi; i++ {
					f(i)
				}
				return nil
			}, workers.WithChunk(1))
		}},
	} {
		t.Run(fmt.Sprintf("%s/max=%d", tc.name, w.MaxWorkers()), func(t *testing.T) {
			var hits [n]atomic.Int32
			v := panicValue(func() {
				tc.run(func(i int) {
					hits[i].Add(1)
					if i == bad {
						panicSite("boom")
					}
				})
			})
			pe, ok := v.(*workers.PanicError)
			require.True(t, ok, "got %#v; want a *workers.PanicError", v)
			assert.Equal(t, "boom", pe.Value)
			assert.Contains(t, string(pe.Stack), "panicSite", "the stack is the panic's")
			if w.MaxWorkers() == 1 {
				assert.True(t, pe.OnCaller, "one copy: the caller's")
			}
			if tc.worker {
				assert.Equal(t, bad, pe.Worker, "the i that panicked")
			}
			if strings.HasPrefix(tc.name, "ForRangeContext") {
				return // it stops claiming after a failure
			}
			for i := range hits {
				assert.Equal(t, int32(1), hits[i].Load(), "calls of i = %d", i)
			}
		})
	}
}

// TestPanicErrorCountsWhatItNames: a run's PanicError counts the copies that
// panicked, a loop's the body calls, and its message names which, so a loop
// of 1,000 failing calls on two copies never reads "999 more copies".
func TestPanicErrorCountsWhatItNames(t *testing.T) {
	w := workers.New("panic-units", 2)
	defer w.Close()
	inner := workers.New("panic-units-inner", 2)
	defer inner.Close()
	boom := func(int) { panic("boom") }
	for _, tc := range []struct {
		name   string
		call   func()
		panics int
		calls  bool
		more   string
	}{
		{"RunN of 2", func() { w.RunN(tasks.Func("t", boom), 2) }, 2, false, "(and 1 more copy panicked)"},
		{"ForRange", func() { w.ForRange(1000, func(_, lo, _ int) { boom(lo) }, workers.WithChunk(1)) }, 1000, true, "(and 999 more calls panicked)"},
		{"Do", func() { w.Do(2, boom) }, 2, true, "(and 1 more call panicked)"},
		{"RunContext", func() {
			_ = w.RunContext(context.Background(), 3, func(_ context.Context, i int) error { boom(i); return nil })
		}, 3, true, "(and 2 more calls panicked)"},
		{"ForRange nested in a copy", func() {
			w.RunN(tasks.Func("outer", func(id int) {
				if id == 0 {
					inner.ForRange(1000, func(_, lo, _ int) { boom(lo) }, workers.WithChunk(1))
				}
			}), 2)
		}, 1, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pe, ok := panicValue(tc.call).(*workers.PanicError)
			require.True(t, ok, "want a *PanicError")
			head, _, _ := strings.Cut(pe.Error(), "\n\n")     // without the stack
			if in, ok := pe.Value.(*workers.PanicError); ok { // the nested loop's, as the copy's value
				assert.Equal(t, 1, pe.Panics, "one copy panicked")
				assert.NotContains(t, head[:strings.Index(head, "panic: ")], "more", "one copy panicked")
				pe, tc.panics, tc.calls, tc.more = in, 1000, true, "(and 999 more calls panicked)"
				head, _, _ = strings.Cut(pe.Error(), "\n\n")
			}
			assert.Equal(t, tc.panics, pe.Panics, "%v", pe)
			assert.Equal(t, tc.calls, pe.Calls)
			assert.Contains(t, head, tc.more)
			if tc.calls {
				assert.NotContains(t, head, "more cop", "a loop's message counts calls")
			}
		})
	}
}

// callDepth returns how many frames its caller's goroutine has.
func callDepth() int {
	var pcs [1024]uintptr
	return runtime.Callers(1, pcs[:])
}

// TestLoopGoexitsDoNotNest: in every loop, on one copy, several, on the
// workers only and on a busy set, a body call's Goexit ends its copy, and
// the calls after it run on stacks that do not grow with the Goexits before
// them (a copy that went on claiming inside a Goexit's deferred call would
// keep every exited call's frames); every index still runs once, and the
// Goexit goes on (on the caller) or comes back as a *PanicError (a worker).
func TestLoopGoexitsDoNotNest(t *testing.T) {
	const n = 200
	loops := append(loopCalls(), loopCall{"ForRange/WorkersOnly", false, func(w *workers.Workers, n int, fail func(int), calls *chunkLog) {
		w.ForRange(n, func(_, lo, hi int) { calls.add(lo, hi); fail(lo) }, workers.WithChunk(1), workers.WithWorkersOnly())
	}})
	for _, set := range []struct {
		name string
		max  int
		busy bool
	}{{"one copy", 1, false}, {"two copies", 2, false}, {"busy", 2, true}} {
		for _, lc := range loops {
			if set.busy && strings.HasSuffix(lc.name, "WorkersOnly") {
				continue // it would wait for the set
			}
			t.Run(set.name+"/"+lc.name, func(t *testing.T) {
				var opts []workers.Option
				if set.busy {
					opts = append(opts, workers.WithConcurrentRuns())
				}
				w := workers.New("no-nest", set.max, opts...)
				defer w.Close()
				if set.busy {
					defer holdSet(w, 2)()
				}
				var calls chunkLog
				var deepest, first atomic.Int64
				o := testutil.Call(func() {
					lc.run(w, n, func(int) {
						d := int64(callDepth())
						first.CompareAndSwap(0, d)
						for old := deepest.Load(); d > old && !deepest.CompareAndSwap(old, d); old = deepest.Load() {
						}
						runtime.Goexit()
					}, &calls)
				})
				require.NoError(t, calls.coversOnce(n), "indices")
				if !o.Goexit {
					pe, ok := o.Value.(*workers.PanicError)
					require.True(t, ok, "got %+v; want a Goexit or a *PanicError", o)
					assert.True(t, pe.Goexit, "%v", pe)
					assert.Equal(t, n, pe.Panics, "every exited call counted")
				}
				// A worker's stack is a few frames shallower than the caller's; the
				// frames of three nested drains would exceed this.
				assert.LessOrEqual(t, deepest.Load(), first.Load()+32, "the deepest call's frames against the first's")
			})
		}
	}
}

// After a Goexit on the caller, the calls left run on a goroutine that
// stands in for it: their failures are reported on the caller, and a nested
// run on the same set from one panics as one from the caller would, instead
// of waiting for the set its caller holds.
func TestLoopStandInIsTheCaller(t *testing.T) {
	w := workers.New("stand-in", 2)
	defer w.Close()
	w.SetActiveWorkers(1) // one copy: every call on the caller
	for _, tc := range []struct {
		name string
		call func(i int)
		want string
	}{
		{"panic", func(int) { panic("after") }, "after"},
		{"nested run", func(int) { w.Do(1, func(int) {}) }, "a nested run would deadlock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o testutil.Outcome
			testutil.Within(t, "a loop after its caller's Goexit", time.Minute, func() {
				o = testutil.Call(func() {
					w.Do(3, func(i int) {
						switch i {
						case 0:
							runtime.Goexit()
						case 1:
							tc.call(i)
						}
					})
				})
			})
			pe, ok := o.Value.(*workers.PanicError)
			require.True(t, ok, "got %+v; want the later call's panic as a *PanicError", o)
			assert.Contains(t, fmt.Sprint(pe.Value), tc.want)
			assert.Equal(t, 1, pe.Worker, "the failed i")
			assert.True(t, pe.OnCaller, "a call run for the exited caller is on the caller")
			assert.Equal(t, 2, pe.Panics, "the Goexit and the panic")
		})
	}
	checkUsable(t, w)
}
