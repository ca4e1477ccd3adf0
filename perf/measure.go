package main

import (
	"math"
	"runtime"
	"slices"
	"time"
)

// warmRuns is how many untimed runs precede the timed ones on a fresh runner:
// they create lazily started goroutines and warm caches and branch predictors.
const warmRuns = 200

// warmCount returns how many warm-up runs precede a batch of runs runs: at
// most warmRuns, and never more than about half the batch.
func warmCount(runs int) int { return min(warmRuns, runs/2+1) }

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

// iterStats is one iteration of one setup.
type iterStats struct {
	TotalNS      float64  `json:"total_ns"`       // the batch pass, whole
	AvgNS        float64  `json:"avg_ns"`         // the batch pass, per run
	MaxNS        *float64 `json:"max_ns"`         // slowest run of the per-run pass; null without one
	AllocsPerRun float64  `json:"allocs_per_run"` // heap allocations per run in the batch pass
}

// setupStats summarizes every iteration of one setup.
type setupStats struct {
	Runs        int         `json:"runs"` // timed runs per iteration and pass
	Iters       []iterStats `json:"iters"`
	MedianAvgNS float64     `json:"median_avg_ns"` // median over iterations of AvgNS
	P50NS       float64     `json:"p50_ns"`        // over all per-run latencies
	P90NS       float64     `json:"p90_ns"`
	P99NS       float64     `json:"p99_ns"`
	MaxNS       float64     `json:"max_ns"`
	// AllocsPerRun is the batch passes' allocations divided by their runs,
	// rounded down, like testing.B's allocs/op.
	AllocsPerRun int64 `json:"allocs_per_run"`
	// Waits is how workers obtained their copies in the batch passes; null
	// for rows that are not workgang's.
	Waits *waitStats `json:"worker_waits"`
}

// collector accumulates the iterations of one setup.
type collector struct {
	runs   int
	perRun bool // also time each run (for percentiles), in a second pass
	iters  []iterStats
	lat    []time.Duration // per-run latencies of every iteration
	allocs uint64
	waits  *waitStats // summed over the batch passes; nil if not a workgang runner
}

// newCollector returns a collector for iterations of runs runs each; perRun
// adds the per-run pass.
func newCollector(runs, iters int, perRun bool) *collector {
	c := &collector{runs: runs, perRun: perRun}
	if perRun {
		c.lat = make([]time.Duration, 0, runs*iters)
	}
	return c
}

// measure starts a runner with start, warms it up, times one batch pass and
// (if perRun) one per-run pass, closes it and records the iteration. A
// garbage collection first keeps earlier setups' garbage out of the timing.
func (c *collector) measure(start func() runner) {
	r := start()
	defer r.close()
	for range warmCount(c.runs) {
		r.run()
	}
	runtime.GC()
	var before waitStats
	if r.waits != nil {
		before = r.waits()
	}
	elapsed, allocs := timeBatch(r.run, c.runs)
	if r.waits != nil {
		c.addWaits(r.waits().sub(before))
	}
	it := iterStats{
		TotalNS:      float64(elapsed),
		AvgNS:        float64(elapsed) / float64(c.runs),
		AllocsPerRun: float64(allocs) / float64(c.runs),
	}
	if c.perRun {
		lat := c.lat[len(c.lat) : len(c.lat)+c.runs]
		timeEach(r.run, lat)
		c.lat = c.lat[:len(c.lat)+c.runs]
		m := float64(slices.Max(lat))
		it.MaxNS = &m
	}
	c.allocs += allocs
	c.iters = append(c.iters, it)
}

// addWaits adds one batch's worker wait counts.
func (c *collector) addWaits(w waitStats) {
	if c.waits == nil {
		c.waits = &waitStats{}
	}
	*c.waits = c.waits.add(w)
}

// stats summarizes the iterations recorded so far.
func (c *collector) stats() setupStats {
	avgs := make([]float64, len(c.iters))
	for i, it := range c.iters {
		avgs[i] = it.AvgNS
	}
	sorted := slices.Clone(c.lat)
	slices.Sort(sorted)
	return setupStats{
		Runs:         c.runs,
		Iters:        c.iters,
		MedianAvgNS:  median(avgs),
		P50NS:        float64(percentile(sorted, 50)),
		P90NS:        float64(percentile(sorted, 90)),
		P99NS:        float64(percentile(sorted, 99)),
		MaxNS:        float64(percentile(sorted, 100)),
		AllocsPerRun: int64(c.allocs / uint64(c.runs*len(c.iters))),
		Waits:        c.waits,
	}
}

// percentile returns the p-th percentile (nearest rank) of sorted, or 0 if it
// is empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// median returns the median of xs (the mean of the middle two for an even
// count), or 0 if xs is empty. It does not modify xs.
func median[T ~float64 | ~int64](xs []T) T {
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

// ratio returns a/b, or 0 when b is 0 (an unmeasured row).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
