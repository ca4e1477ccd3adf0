package lat

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSummarize(t *testing.T) {
	var s []time.Duration
	for i := 100; i >= 1; i-- { // reversed: Summarize sorts
		s = append(s, time.Duration(i))
	}
	got := Summarize(s)
	assert.Equal(t, Summary{N: 100, Mean: 50, P50: 50, P75: 75, P90: 90, P99: 99, Max: 100}, got)
	assert.Equal(t, Summary{}, Summarize(nil))
	one := Summarize([]time.Duration{7})
	assert.Equal(t, Summary{N: 1, Mean: 7, P50: 7, P75: 7, P90: 7, P99: 7, Max: 7}, one)
}

func TestPercentile(t *testing.T) {
	s := []time.Duration{1, 2, 3, 4}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0, 1}, {25, 1}, {26, 2}, {50, 2}, {75, 3}, {99, 4}, {100, 4}} {
		assert.Equal(t, tc.want, Percentile(s, tc.p), "p%v", tc.p)
	}
	assert.PanicsWithValue(t, "lat: Percentile(0 samples, 50): no samples or p out of [0, 100]", func() { Percentile(nil, 50) })
	assert.Panics(t, func() { Percentile(s, 101) })
}

func TestMicros(t *testing.T) {
	assert.Equal(t, "12.3", Micros(12345*time.Nanosecond))
}
