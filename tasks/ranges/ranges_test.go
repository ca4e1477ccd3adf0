package ranges_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks/ranges"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestChunkSize(t *testing.T) {
	for _, tc := range []struct {
		n, workers, want int
	}{
		{0, 1, 1},
		{1, 4, 1},
		{8, 1, 1},
		{9, 1, 2},
		{1000, 2, 63}, // ceil(1000/16)
		{1 << 20, 8, 16384},
	} {
		if got := ranges.ChunkSize(tc.n, tc.workers); got != tc.want {
			t.Errorf("ChunkSize(%d, %d) = %d; want %d", tc.n, tc.workers, got, tc.want)
		}
	}
	assert.PanicsWithValue(t, "ranges: ChunkSize: negative length -1", func() { ranges.ChunkSize(-1, 1) })
	assert.PanicsWithValue(t, "ranges: ChunkSize: workers = 0, want >= 1", func() { ranges.ChunkSize(1, 0) })
}

func TestLoopSequentialChunks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, chunk int
		want     [][2]int
	}{
		{"empty", 0, 3, nil},
		{"exact", 6, 3, [][2]int{{0, 3}, {3, 6}}},
		{"ragged", 7, 3, [][2]int{{0, 3}, {3, 6}, {6, 7}}},
		{"chunk larger than n", 2, 10, [][2]int{{0, 2}}},
		{"chunk 0 picks eighths", 16, 0, [][2]int{{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 10}, {10, 12}, {12, 14}, {14, 16}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoop(tc.n, tc.chunk)
			assert.Equal(t, len(tc.want), l.NumChunks())
			assert.Equal(t, tc.want, chunks(l))
			assert.Equal(t, tc.n, l.Claimed())
			_, _, ok := l.Next()
			assert.False(t, ok)
		})
	}
}

func TestLoopZeroValueIsEmpty(t *testing.T) {
	var l ranges.Loop
	_, _, ok := l.Next()
	assert.False(t, ok)
	assert.Equal(t, 0, l.NumChunks())
}

func TestLoopConcurrentCoversEachIterationOnce(t *testing.T) {
	for _, tc := range []struct {
		name            string
		n, chunk, procs int
	}{
		{"chunk 1", 5000, 1, 4},
		{"chunk 7", 10001, 7, 3},
		{"default chunk", 100000, 0, 2},
		{"more copies than chunks", 10, 4, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits := make([]atomic.Int32, tc.n)
			body := func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			}
			task := ranges.NewTask("cover", tc.n, tc.chunk, body)
			for round := range 5 {
				testutil.RunCopies(tc.procs, task.Work)
				for i := range hits {
					if got := hits[i].Swap(0); got != 1 {
						t.Fatalf("round %d: iteration %d ran %d times; want 1", round, i, got)
					}
				}
				task.Loop().Reset(tc.n, tc.chunk)
			}
		})
	}
}

func TestTask(t *testing.T) {
	task := ranges.NewTask("sum", 100, 10, func(worker, lo, hi int) {})
	assert.Equal(t, "sum", task.Name())
	assert.Equal(t, 10, task.Loop().NumChunks())
	assert.PanicsWithValue(t, `ranges: NewTask("x"): nil body`, func() { ranges.NewTask("x", 1, 1, nil) })
	assert.PanicsWithValue(t, "ranges: Loop.Reset: negative length -1", func() { newLoop(-1, 1) })
	assert.PanicsWithValue(t, "ranges: Loop.Reset: negative chunk -1", func() { newLoop(1, -1) })
	require.NotPanics(t, func() { testutil.RunCopies(3, task.Work) })
	assert.Equal(t, 100, task.Loop().Claimed())
}

// newLoop returns a loop reset to [0, n) in chunks of chunk iterations.
func newLoop(n, chunk int) *ranges.Loop {
	l := new(ranges.Loop)
	l.Reset(n, chunk)
	return l
}

// newGuided returns a loop reset to a guided [0, n).
func newGuided(n, minChunk, copies int) *ranges.Loop {
	l := new(ranges.Loop)
	l.ResetGuided(n, minChunk, copies)
	return l
}

// chunks drains l on the calling goroutine and returns its chunks in order.
func chunks(l *ranges.Loop) (got [][2]int) {
	for {
		lo, hi, ok := l.Next()
		if !ok {
			return got
		}
		got = append(got, [2]int{lo, hi})
	}
}
