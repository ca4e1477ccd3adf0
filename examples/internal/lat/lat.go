// Package lat summarizes latency samples the way wrk --latency prints them:
// percentiles of the sorted samples, plus the mean and the maximum.
package lat

import (
	"fmt"
	"slices"
	"time"
)

// Summary is the distribution of a set of latency samples. The zero value
// is the summary of no samples.
type Summary struct {
	N    int           `json:"n"`
	Mean time.Duration `json:"mean_ns"`
	P50  time.Duration `json:"p50_ns"`
	P75  time.Duration `json:"p75_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
}

// Summarize sorts samples in place and returns their summary.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, d := range samples {
		sum += d
	}
	return Summary{
		N:    len(samples),
		Mean: sum / time.Duration(len(samples)),
		P50:  Percentile(samples, 50),
		P75:  Percentile(samples, 75),
		P90:  Percentile(samples, 90),
		P99:  Percentile(samples, 99),
		Max:  samples[len(samples)-1],
	}
}

// Percentile returns the p-th percentile (0 <= p <= 100) of sorted samples,
// nearest rank: the smallest sample such that at least p percent of the
// samples are at most it. It panics on an empty slice or p out of range.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 || p < 0 || p > 100 {
		panic(fmt.Sprintf("lat: Percentile(%d samples, %v): no samples or p out of [0, 100]", len(sorted), p))
	}
	rank := int(p/100*float64(len(sorted))+0.999999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

// Micros formats d in microseconds with one decimal, as the tables print it.
func Micros(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond))
}
