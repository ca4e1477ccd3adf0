// Package measure times the runs of the perf sections and summarizes them:
// a batch of runs between two clock reads (no clock cost in the average), a
// second pass with one clock read per run (latency percentiles), the heap
// allocations of the batch, and the medians, percentiles and ratios every
// section reports.
package measure

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/workgang/workgang/perf/internal/runners"
)

// WarmRuns is how many untimed runs precede the timed ones on a fresh runners.Runner:
// they create lazily started goroutines and warm caches and branch predictors.
const WarmRuns = 200

// WarmCount returns how many warm-up runs precede a batch of runs runs: at
// most WarmRuns, and never more than about half the batch.
func WarmCount(runs int) int { return min(WarmRuns, runs/2+1) }

// timeBatch runs run runs times between two clock reads and returns the
// elapsed time and the number of heap allocations made meanwhile (by any
// goroutine; nothing else runs during a measurement).
func timeBatch(run func(), runs int) (elapsed time.Duration, allocs uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range runs {
		run()
	}
	elapsed = time.Since(start)
	runtime.ReadMemStats(&after)
	return elapsed, after.Mallocs - before.Mallocs
}

// timeEach runs run len(lat) times and stores each run's latency in lat. The
// clock is read once per run, between runs, so each latency includes one
// clock read and nothing else of the harness.
func timeEach(run func(), lat []time.Duration) {
	prev := time.Now()
	for i := range lat {
		run()
		now := time.Now()
		lat[i] = now.Sub(prev)
		prev = now
	}
}

// IterStats is one iteration of one setup.
type IterStats struct {
	TotalNS      float64  `json:"total_ns"`       // the batch pass, whole
	AvgNS        float64  `json:"avg_ns"`         // the batch pass, per run
	MaxNS        *float64 `json:"max_ns"`         // slowest run of the per-run pass; null without one
	AllocsPerRun float64  `json:"allocs_per_run"` // heap allocations per run in the batch pass
}

// SetupStats summarizes every iteration of one setup.
type SetupStats struct {
	Runs        int         `json:"runs"` // timed runs per iteration and pass
	Iters       []IterStats `json:"iters"`
	MedianAvgNS float64     `json:"median_avg_ns"` // Median over iterations of AvgNS
	P50NS       float64     `json:"p50_ns"`        // over all per-run latencies
	P90NS       float64     `json:"p90_ns"`
	P99NS       float64     `json:"p99_ns"`
	MaxNS       float64     `json:"max_ns"`
	// AllocsPerRun is the batch passes' allocations divided by their runs,
	// rounded down, like testing.B's allocs/op.
	AllocsPerRun int64 `json:"allocs_per_run"`
	// Waits is how workers obtained their copies in the batch passes; null
	// for rows that are not workgang's.
	Waits *runners.WaitStats `json:"worker_waits"`
}

// Collector accumulates the iterations of one setup.
type Collector struct {
	runs   int
	perRun bool // also time each run (for percentiles), in a second pass
	iters  []IterStats
	lat    []time.Duration // per-run latencies of every iteration
	allocs uint64
	waits  *runners.WaitStats // summed over the batch passes; nil if not a workgang runners.Runner
}

// NewCollector returns a Collector for iterations of runs runs each; perRun
// adds the per-run pass.
func NewCollector(runs, iters int, perRun bool) *Collector {
	c := &Collector{runs: runs, perRun: perRun}
	if perRun {
		c.lat = make([]time.Duration, 0, runs*iters)
	}
	return c
}

// Measure starts a runners.Runner with start, warms it up, times one batch pass and
// (if perRun) one per-run pass, closes it and records the iteration. A
// garbage collection first keeps earlier setups' garbage out of the timing.
func (c *Collector) Measure(start func() runners.Runner) {
	r := start()
	defer r.Close()
	for range WarmCount(c.runs) {
		r.Run()
	}
	runtime.GC()
	var before runners.WaitStats
	if r.Waits != nil {
		before = r.Waits()
	}
	elapsed, allocs := timeBatch(r.Run, c.runs)
	if r.Waits != nil {
		c.addWaits(r.Waits().Sub(before))
	}
	it := IterStats{
		TotalNS:      float64(elapsed),
		AvgNS:        float64(elapsed) / float64(c.runs),
		AllocsPerRun: float64(allocs) / float64(c.runs),
	}
	if c.perRun {
		lat := c.lat[len(c.lat) : len(c.lat)+c.runs]
		timeEach(r.Run, lat)
		c.lat = c.lat[:len(c.lat)+c.runs]
		m := float64(slices.Max(lat))
		it.MaxNS = &m
	}
	c.allocs += allocs
	c.iters = append(c.iters, it)
}

// addWaits adds one batch's worker wait counts.
func (c *Collector) addWaits(w runners.WaitStats) {
	if c.waits == nil {
		c.waits = &runners.WaitStats{}
	}
	*c.waits = c.waits.Add(w)
}

// Stats summarizes the iterations recorded so far.
func (c *Collector) Stats() SetupStats {
	avgs := make([]float64, len(c.iters))
	for i, it := range c.iters {
		avgs[i] = it.AvgNS
	}
	sorted := slices.Clone(c.lat)
	slices.Sort(sorted)
	return SetupStats{
		Runs:         c.runs,
		Iters:        c.iters,
		MedianAvgNS:  Median(avgs),
		P50NS:        float64(Percentile(sorted, 50)),
		P90NS:        float64(Percentile(sorted, 90)),
		P99NS:        float64(Percentile(sorted, 99)),
		MaxNS:        float64(Percentile(sorted, 100)),
		AllocsPerRun: int64(c.allocs / uint64(c.runs*len(c.iters))),
		Waits:        c.waits,
	}
}

// Percentile returns the p-th Percentile (nearest rank) of sorted, or 0 if it
// is empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Median returns the Median of xs (the mean of the middle two for an even
// count), or 0 if xs is empty. It does not modify xs.
func Median[T ~float64 | ~int64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Ratio returns a/b, or 0 when b is 0 (an unmeasured row).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// FmtNS formats a duration in nanoseconds as microseconds or milliseconds.
func FmtNS(ns float64) string {
	if ns >= 1e6 {
		return fmt.Sprintf("%gms", ns/1e6)
	}
	return fmt.Sprintf("%.3gus", ns/1e3)
}
