package forkjoin

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/perf/internal/work"
)

// grainsNS is the sweep of total work per phase (W), in nanoseconds: dense
// where implementations break even, sparse where all of them win. The
// default run sweeps grainsShortNS, -long all of grainsNS.
var (
	grainsNS      = []float64{500, 1000, 2000, 3000, 5000, 7000, 10000, 15000, 20000, 30000, 50000, 100000, 200000, 500000, 1000000}
	grainsShortNS = []float64{500, 1000, 2000, 3000, 5000, 10000, 20000, 30000, 50000, 100000, 300000, 1000000}
)

// grainGrains returns the grains the configuration sweeps.
func grainGrains(c harness.Config) []float64 {
	if c.Long {
		return grainsNS
	}
	return grainsShortNS
}

// grainBudget returns the runs' worth of microseconds of work one grain
// measurement does: -runs with -long, half of it otherwise (the sweep is
// the longest section; half keeps the default run within its stated time).
func grainBudget(c harness.Config) int {
	if c.Long {
		return c.Runs
	}
	return max(1, c.Runs/2)
}

// minGrainRuns is the fewest runs a grain measurement times.
const minGrainRuns = 3

// Break-even kinds.
const (
	beInterpolated = "interpolated" // crossing between two grains of the sweep
	beBelow        = "below-sweep"  // faster than serial already at the smallest grain
	beNone         = "none"         // not faster than serial at the largest grain
)

// GrainImpl is one implementation's sweep.
type GrainImpl struct {
	Impl    string    `json:"impl"`
	AvgNS   []float64 `json:"avg_ns"`  // per grain: median average phase time
	Speedup []float64 `json:"speedup"` // per grain: serial / AvgNS
	// BreakEvenNS is the smallest W from which on the implementation beats
	// serial (see breakEven), interpolated log-linearly between grains; with
	// kind below-sweep it is the smallest grain (an upper bound); with none
	// it is 0 here and null in JSON.
	BreakEvenNS   float64 `json:"break_even_ns"`
	BreakEvenKind string  `json:"break_even_kind"`
}

// MarshalJSON encodes g with break_even_ns null when there is none.
func (g GrainImpl) MarshalJSON() ([]byte, error) {
	type plain GrainImpl // without this method
	out := struct {
		plain
		BreakEvenNS *float64 `json:"break_even_ns"`
	}{plain: plain(g)}
	if g.BreakEvenKind != beNone {
		out.BreakEvenNS = &g.BreakEvenNS
	}
	return json.Marshal(out)
}

// GrainSweep is the sweep at one n.
type GrainSweep struct {
	N        int         `json:"n"`
	GrainsNS []float64   `json:"grains_ns"`
	Runs     []int       `json:"runs"`      // timed runs per grain and iteration
	SerialNS []float64   `json:"serial_ns"` // per grain: median serial time
	Impls    []GrainImpl `json:"impls"`
}

// GrainResult is the grain section's result.
type GrainResult struct {
	NSPerUnit float64      `json:"ns_per_unit"` // calibrated cost of one unit of work
	Sweeps    []GrainSweep `json:"sweeps"`
}

// sweep returns the sweep at n, or nil.
func (r *GrainResult) sweep(n int) *GrainSweep {
	for i := range r.Sweeps {
		if r.Sweeps[i].N == n {
			return &r.Sweeps[i]
		}
	}
	return nil
}

// impl returns the named implementation's sweep, or nil.
func (s *GrainSweep) impl(name string) *GrainImpl {
	for i := range s.Impls {
		if s.Impls[i].Impl == name {
			return &s.Impls[i]
		}
	}
	return nil
}

// grainNs returns the copy counts of the sweep: 2 (the targets' n) and full
// parallelism if larger.
func grainNs(size int) []int {
	if size > 2 {
		return []int{2, size}
	}
	return []int{2}
}

// grainRuns returns the runs per measurement at grain w: about runs
// microseconds of work, at least minGrainRuns and at most runs.
func grainRuns(runs int, w float64) int {
	budget := float64(runs) * float64(time.Microsecond)
	return int(min(max(budget/w, minGrainRuns), float64(runs)))
}

// runGrain calibrates the unit of work and sweeps each n. Besides fresh sets,
// workgang's two modes also run on one long-lived set of -max workers that
// serves both modes and every n and grain, as an embedder's set does.
func runGrain(h *harness.Harness) (any, error) {
	ls := runners.NewLongSet(h.Cfg.Max)
	defer ls.Close()
	res := &GrainResult{NSPerUnit: h.UnitNS()}
	fmt.Fprintf(h.Out, "work: xorshift steps, %.3f ns each; serial = the same n copies called on the caller\n", res.NSPerUnit)
	fmt.Fprintf(h.Out, "speedup = serial time / implementation time (medians over %d iterations); above 1 wins\n", h.Cfg.Iters)
	for _, n := range grainNs(h.Cfg.Max) {
		s := sweepGrain(h, grainImpls(ls), n, res.NSPerUnit)
		printSweep(h.Out, s)
		res.Sweeps = append(res.Sweeps, s)
	}
	return res, nil
}

// grainImpls returns the implementations the sweep compares with serial:
// the peers section's rows (workgang's modes on fresh sets and on ls, the
// peers) but direct, which is serial.
func grainImpls(ls *runners.LongSet) []runners.Impl {
	var out []runners.Impl
	for _, im := range peerImpls(ls) {
		if im.Name != runners.NameSerial {
			out = append(out, im)
		}
	}
	return out
}

// sweepGrain measures serial and every implementation of others at each
// grain for n copies, interleaving them per iteration.
func sweepGrain(h *harness.Harness, others []runners.Impl, n int, nsPerUnit float64) GrainSweep {
	ims := append([]runners.Impl{runners.Find(runners.NameSerial)}, others...)
	grains := grainGrains(h.Cfg)
	s := GrainSweep{N: n, GrainsNS: grains}
	s.Impls = make([]GrainImpl, len(ims)-1)
	for i := range s.Impls {
		s.Impls[i].Impl = ims[i+1].Name
	}
	for _, w := range grains {
		runs := grainRuns(grainBudget(h.Cfg), w)
		gw := work.NewGrain(n, w, nsPerUnit)
		avgs := measureGrain(h, ims, n, w, runs, gw)
		s.Runs = append(s.Runs, runs)
		s.SerialNS = append(s.SerialNS, avgs[0])
		for i := range s.Impls {
			s.Impls[i].AvgNS = append(s.Impls[i].AvgNS, avgs[i+1])
			s.Impls[i].Speedup = append(s.Impls[i].Speedup, measure.Ratio(avgs[0], avgs[i+1]))
		}
	}
	for i := range s.Impls {
		gi := &s.Impls[i]
		gi.BreakEvenNS, gi.BreakEvenKind = breakEven(grains, gi.Speedup)
	}
	return s
}

// measureGrain returns the median average phase time of each of ims at one
// grain.
func measureGrain(h *harness.Harness, ims []runners.Impl, n int, w float64, runs int, gw *work.Grain) []float64 {
	cs := make([]*measure.Collector, len(ims))
	for i := range cs {
		cs[i] = measure.NewCollector(runs, h.Cfg.Iters, false)
	}
	for it := range h.Cfg.Iters {
		for i, im := range ims {
			h.Status("grain n=%d W=%s iteration %d/%d %s", n, measure.FmtNS(w), it+1, h.Cfg.Iters, im.Name)
			cs[i].Measure(func() runners.Runner { return im.Start(h.Cfg.Max, n, gw.Work) })
		}
	}
	avgs := make([]float64, len(ims))
	for i, c := range cs {
		avgs[i] = c.Stats().MedianAvgNS
	}
	return avgs
}

// breakEven returns the smallest grain from which on the implementation
// beats serial. Speedup should not fall as the grain grows, so the measured
// speedups are first replaced by their monotone (isotonic) fit: a noisy dip
// at one grain is averaged with its neighbours instead of moving the answer
// past it. The answer is the crossing of 1 by the fit, interpolated in
// log(grain). It reports beBelow (and the smallest grain) when the fit is
// above 1 everywhere, and beNone (and 0) when it is not above 1 at the
// largest grain.
func breakEven(grains, speedups []float64) (float64, string) {
	fit := isotonic(speedups)
	last := -1 // the last grain whose fitted speedup is at most 1
	for i, s := range fit {
		if s <= 1 {
			last = i
		}
	}
	switch {
	case last < 0:
		return grains[0], beBelow
	case last == len(fit)-1:
		return 0, beNone
	}
	a, b := last, last+1
	f := (1 - fit[a]) / (fit[b] - fit[a]) // fit[b] > 1 >= fit[a]
	la, lb := math.Log(grains[a]), math.Log(grains[b])
	return math.Exp(la + f*(lb-la)), beInterpolated
}

// isotonic returns the non-decreasing sequence closest to ys in least
// squares (pool adjacent violators: neighbours out of order are replaced by
// their mean until none are).
func isotonic(ys []float64) []float64 {
	type block struct {
		sum float64
		n   int
	}
	var bs []block
	for _, y := range ys {
		bs = append(bs, block{y, 1})
		for len(bs) > 1 {
			p, q := bs[len(bs)-2], bs[len(bs)-1]
			if p.sum/float64(p.n) <= q.sum/float64(q.n) {
				break
			}
			bs = append(bs[:len(bs)-2], block{p.sum + q.sum, p.n + q.n})
		}
	}
	out := make([]float64, 0, len(ys))
	for _, b := range bs {
		for range b.n {
			out = append(out, b.sum/float64(b.n))
		}
	}
	return out
}

// printSweep prints the speedup table and break-even grains of one sweep.
func printSweep(w io.Writer, s GrainSweep) {
	fmt.Fprintf(w, "\nn=%d\n", s.N)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cols := []verdict.Col{verdict.Plain("W"), verdict.Plain("runs"), verdict.Plain("serial us")}
	for _, gi := range s.Impls {
		cols = append(cols, verdict.HigherCol(gi.Impl))
	}
	verdict.Heading(tw, true, cols...)
	var mk verdict.Marker
	for g, wns := range s.GrainsNS {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t", measure.FmtNS(wns), s.Runs[g], s.SerialNS[g]/1000)
		for _, gi := range s.Impls {
			fmt.Fprintf(tw, "%s\t", mk.Speedup("%.2f", gi.Speedup[g], s.N))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "break-even\t\t\t")
	for _, gi := range s.Impls {
		fmt.Fprintf(tw, "%s\t", fmtBreakEven(gi.BreakEvenNS, gi.BreakEvenKind))
	}
	fmt.Fprintln(tw)
	tw.Flush()
	mk.Footnote(w)
}

// fmtBreakEven formats a break-even grain with its kind.
func fmtBreakEven(ns float64, kind string) string {
	switch kind {
	case beBelow:
		return "<=" + measure.FmtNS(ns)
	case beNone:
		return "none"
	}
	return measure.FmtNS(ns)
}
