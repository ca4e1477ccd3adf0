package phases

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Sums and averages saturate: values MaxInt64 and 1 once gave a negative sum
// and average.
func TestSummarySaturates(t *testing.T) {
	const big, small = math.MaxInt64, math.MinInt64
	for _, tc := range []struct {
		name      string
		values    []int64
		sum, diff int64
		avg       float64
	}{
		{"MaxInt64 and 1", []int64{big, 1}, big, big - 1, (float64(big) + 1) / 2},
		{"MaxInt64 twice", []int64{big, big}, big, 0, float64(big)},
		{"MinInt64 and -1", []int64{small, -1}, small, big, (float64(small) - 1) / 2},
		{"MinInt64 and MaxInt64", []int64{small, big}, -1, big, -0.5},
		{"saturate then come back", []int64{big, 1, -5}, big - 5, big, float64(big) / 3}, // saturation is not undone,
		{"no overflow", []int64{3, 4}, 7, 1, 3.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New[int64]("c", len(tc.values))
			for w, v := range tc.values {
				p.Set(w, v)
			}
			s := p.Summary()
			assert.Equal(t, tc.sum, s.Sum, "Sum")
			assert.Equal(t, tc.diff, s.Diff, "Diff")
			assert.InEpsilon(t, tc.avg, s.Avg, 1e-12, "Avg")
			assert.Equal(t, len(tc.values), s.Workers)
		})
	}
}

func TestAddSaturates(t *testing.T) {
	p := New[int64]("c", 2)
	p.Add(0, math.MaxInt64)
	p.Add(0, 1)
	v, _ := get(p, 0)
	assert.Equal(t, int64(math.MaxInt64), v, "Add saturates up")
	p.Add(0, -1)
	v, _ = get(p, 0)
	assert.Equal(t, int64(math.MaxInt64-1), v, "a saturated value is a value like any other")
	p.Add(1, math.MinInt64)
	p.Add(1, -1)
	v, _ = get(p, 1)
	assert.Equal(t, int64(math.MinInt64), v, "Add saturates down")

	d := New[time.Duration]("t", 2)
	d.Add(0, time.Duration(math.MaxInt64))
	d.Add(0, time.Nanosecond)
	got, _ := get(d, 0)
	assert.Equal(t, time.Duration(math.MaxInt64), got, "durations saturate too")
}
