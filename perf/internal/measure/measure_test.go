package measure

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/perf/internal/runners"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPercentileAndMedian(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {90, 90}, {99, 99}, {100, 100}, {0, 1}} {
		assert.Equal(t, tt.want, Percentile(d, tt.p), "p%v", tt.p)
	}
	assert.Zero(t, Percentile(nil, 50))
	assert.Equal(t, 2.0, Median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, Median([]float64{4, 1, 3, 2}))
	assert.Zero(t, Median[float64](nil))
	assert.Equal(t, 3*time.Millisecond, Median([]time.Duration{time.Millisecond, 5 * time.Millisecond, 3 * time.Millisecond}), "durations too (the mark section)")
	assert.Zero(t, Ratio(1, 0))
}

// TestFmtNS checks the units a duration is printed in.
func TestFmtNS(t *testing.T) {
	for ns, want := range map[float64]string{500: "0.5us", 1500: "1.5us", 200000: "200us", 2e6: "2ms"} {
		assert.Equal(t, want, FmtNS(ns), "%v ns", ns)
	}
}

// TestMaxIsNull checks that an iteration without a per-run pass has no max
// in JSON (null, not 0).
func TestMaxIsNull(t *testing.T) {
	b, err := json.Marshal(IterStats{AvgNS: 1})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"max_ns":null`)
}

// TestCollector measures a runner twice, with the per-run pass, and checks
// the counts and the order of the percentiles; it closes the runner every
// time (goleak checks the rest).
func TestCollector(t *testing.T) {
	c := NewCollector(50, 2, true)
	runs, closes := 0, 0
	for range 2 {
		c.Measure(func() runners.Runner {
			return runners.Runner{Run: func() { runs++ }, Close: func() { closes++ }}
		})
	}
	s := c.Stats()
	assert.Equal(t, 2, closes)
	assert.Equal(t, 2*(WarmCount(50)+2*50), runs, "warm-up, batch and per-run passes")
	require.Len(t, s.Iters, 2)
	assert.NotNil(t, s.Iters[0].MaxNS)
	assert.LessOrEqual(t, s.P50NS, s.P99NS)
	assert.LessOrEqual(t, s.P99NS, s.MaxNS)
	assert.Nil(t, s.Waits, "not a workgang runner")
}
