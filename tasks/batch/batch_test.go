package batch_test

import (
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks/batch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWorkersFromCosts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		costs  []float64 // first half serial, second parallel: irrelevant to the sum
		active int
		want   int
	}{
		{"no subtasks", nil, 4, 1},
		{"zero cost", []float64{0, 0}, 4, 1},
		{"tiny", []float64{0.01}, 4, 1},
		{"exactly two", []float64{1, 1}, 4, 2},
		{"just over two", []float64{1, 1, 0.001}, 4, 3},
		{"clamped", []float64{3.5, 2}, 4, 4},
		{"active 1", []float64{10}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := batch.New("b")
			for i, c := range tc.costs {
				s := batch.Func("s", c, func(int) {})
				if i%2 == 0 {
					b.AddSerial(s)
				} else {
					b.AddParallel(s)
				}
			}
			if got := b.Workers(tc.active); got != tc.want {
				t.Errorf("Workers(%d) with costs %v = %d; want %d", tc.active, tc.costs, got, tc.want)
			}
		})
	}
}

func TestSerialOnceParallelEverywhere(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		b := batch.New("gc")
		const serial = 6
		var serialRuns [serial]atomic.Int32
		for i := range serial {
			b.AddSerial(batch.Func("serial", 0.1, func(int) { serialRuns[i].Add(1) }))
		}
		var parRuns atomic.Int32
		seen := make([]atomic.Int32, n)
		b.AddParallel(batch.Func("parallel", 1, func(w int) {
			parRuns.Add(1)
			seen[w].Add(1)
		}))
		for round := range 10 {
			testutil.RunCopies(n, b.Work)
			for i := range serialRuns {
				require.Equal(t, int32(1), serialRuns[i].Swap(0), "n=%d round %d serial %d", n, round, i)
			}
			require.Equal(t, int32(n), parRuns.Swap(0), "n=%d round %d", n, round)
			for w := range seen {
				require.Equal(t, int32(1), seen[w].Swap(0), "n=%d worker %d", n, w)
			}
			b.Reset()
		}
	}
}

// A copy that panics in a serial subtask leaves the ones after it to the
// other copies, which is why a run that returns normally has run them all.
func TestSerialLeftByAPanickingCopyRunOnAnother(t *testing.T) {
	b := batch.New("post")
	var ran []string
	b.AddSerial(batch.Func("a", 0, func(int) { panic("boom") }))
	b.AddSerial(batch.Func("b", 0, func(int) { ran = append(ran, "b") }))
	b.AddSerial(batch.Func("c", 0, func(int) { ran = append(ran, "c") }))
	assert.PanicsWithValue(t, "boom", func() { b.Work(0) })
	b.Work(1)
	b.Work(2)
	assert.Equal(t, []string{"b", "c"}, ran)
	b.Reset()
	assert.PanicsWithValue(t, "boom", func() { b.Work(0) }, "Reset makes a claimable again")
}

type costly struct{ c float64 }

func (costly) Name() string    { return "costly" }
func (costly) Work(int)        {}
func (s costly) Cost() float64 { return s.c }

func TestPanics(t *testing.T) {
	b := batch.New("p")
	assert.PanicsWithValue(t, `batch: "p": AddSerial: nil subtask`, func() { b.AddSerial(nil) })
	assert.PanicsWithValue(t, `batch: "p": AddParallel: nil subtask`, func() { b.AddParallel(nil) })
	assert.PanicsWithValue(t, `batch: Func("f"): nil function`, func() { batch.Func("f", 1, nil) })
	assert.PanicsWithValue(t, `batch: Func: subtask "f": cost -1, want a finite value >= 0`, func() { batch.Func("f", -1, func(int) {}) })
	assert.Panics(t, func() { batch.Func("f", math.NaN(), func(int) {}) })
	assert.PanicsWithValue(t, `batch: "p": Workers: active = 0, want >= 1`, func() { b.Workers(0) })
	b.AddParallel(costly{math.Inf(1)})
	assert.PanicsWithValue(t, `batch: Workers: subtask "costly": cost +Inf, want a finite value >= 0`, func() { b.Workers(2) })
	assert.Equal(t, "p", b.Name())
}
