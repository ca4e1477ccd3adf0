package phases

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSummaryCounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workers int
		set     map[int]int64
		want    Summary[int64]
		line    string
	}{
		{
			name: "none reported", workers: 3,
			want: Summary[int64]{Name: "Marked"},
			line: "Marked: skipped",
		},
		{
			name: "one", workers: 3, set: map[int]int64{1: 7},
			want: Summary[int64]{Name: "Marked", Min: 7, Avg: 7, Max: 7, Diff: 0, Sum: 7, Workers: 1},
			line: "Marked: Min: 7, Avg: 7, Max: 7, Diff: 0, Sum: 7, Workers: 1",
		},
		{
			name: "some", workers: 4, set: map[int]int64{0: 10, 2: 13, 3: 12},
			want: Summary[int64]{Name: "Marked", Min: 10, Avg: 35.0 / 3, Max: 13, Diff: 3, Sum: 35, Workers: 3},
			line: "Marked: Min: 10, Avg: 11.7, Max: 13, Diff: 3, Sum: 35, Workers: 3",
		},
		{
			name: "zeros count", workers: 2, set: map[int]int64{0: 0, 1: 4},
			want: Summary[int64]{Name: "Marked", Min: 0, Avg: 2, Max: 4, Diff: 4, Sum: 4, Workers: 2},
			line: "Marked: Min: 0, Avg: 2, Max: 4, Diff: 4, Sum: 4, Workers: 2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New[int64]("Marked", tc.workers)
			for w, v := range tc.set {
				p.Set(w, v)
			}
			got := p.Summary()
			assert.Equal(t, tc.want.Workers, got.Workers)
			assert.InDelta(t, tc.want.Avg, got.Avg, 1e-9)
			got.Avg, tc.want.Avg = 0, 0
			assert.Equal(t, tc.want, got)
			if s := p.Summary().String(); s != tc.line {
				t.Errorf("String() = %q; want %q", s, tc.line)
			}
		})
	}
}

func TestSummaryTimes(t *testing.T) {
	p := New[time.Duration]("Mark", 2)
	p.Set(0, 10*time.Millisecond)
	p.Add(1, 12*time.Millisecond)
	p.Add(1, time.Millisecond)
	s := p.Summary()
	assert.Equal(t, 10*time.Millisecond, s.Min)
	assert.Equal(t, 13*time.Millisecond, s.Max)
	assert.Equal(t, 3*time.Millisecond, s.Diff)
	assert.Equal(t, 23*time.Millisecond, s.Sum)
	assert.InDelta(t, float64(11500*time.Microsecond), s.Avg, 1e-6)
	assert.Equal(t, "Mark (ms): Min: 10.000, Avg: 11.500, Max: 13.000, Diff: 3.000, Sum: 23.000, Workers: 2", p.Summary().String())
	assert.Equal(t, "Mark (ms): skipped", New[time.Duration]("Mark", 1).Summary().String())
}

func TestSetTwicePanicsAddAccumulates(t *testing.T) {
	p := New[int64]("Steals", 2)
	p.Set(0, 1)
	assert.PanicsWithValue(t, `phases: "Steals": Set: worker 0 already has a value`, func() { p.Set(0, 2) })
	p.Add(1, 2)
	p.Add(1, 3)
	v, ok := get(p, 1)
	assert.True(t, ok)
	assert.Equal(t, int64(5), v)
	p.Reset()
	_, ok = get(p, 1)
	assert.False(t, ok)
	assert.NotPanics(t, func() { p.Set(0, 2) }, "Set after Reset")
	assert.PanicsWithValue(t, `phases: New("x"): workers = 0, want >= 1`, func() { New[int64]("x", 0) })
	assert.Equal(t, "Steals", p.Summary().Name)
	assert.Len(t, p.slots, 2)
}

// TestConcurrentRecording has every worker record its own slot at once; the
// race detector checks that slots are independent.
func TestConcurrentRecording(t *testing.T) {
	const n = 8
	p := New[int64]("Work", n)
	testutil.RunCopies(n, func(w int) {
		for range 1000 {
			p.Add(w, 1)
		}
	})
	s := p.Summary()
	require.Equal(t, n, s.Workers)
	assert.Equal(t, int64(n*1000), s.Sum)
	assert.Equal(t, int64(0), s.Diff)
}

// get returns worker's value and whether it was set.
func get[V value](p *Phase[V], worker int) (V, bool) {
	s := &p.slots[worker]
	return V(s.v), s.set
}
