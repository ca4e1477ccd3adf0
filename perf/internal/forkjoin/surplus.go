package forkjoin

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/perf/internal/work"
)

// surplusCopyNS are the works per copy of the surplus section, in ns: about
// the cost of a wake-up, and ten times that.
var surplusCopyNS = []float64{5000, 50000}

// surplusCase is one row of the surplus section: n copies of CopyNS of work
// per copy, in one mode, on the long-lived set (Created workers, more than
// the run needs) and on a set with exactly the workers the run needs.
type surplusCase struct {
	Mode    string  `json:"mode"` // workers or workers+caller
	N       int     `json:"n"`
	Needed  int     `json:"workers_needed"`  // n, or n-1 with caller-runs
	Created int     `json:"workers_created"` // workers of the long-lived set
	CopyNS  float64 `json:"copy_ns"`         // work per copy
	Runs    int     `json:"runs"`            // timed runs per iteration and set
	// SurplusNS and ExactNS are the median (over iterations) average run
	// time on the long-lived set and on the exact set.
	SurplusNS float64 `json:"surplus_ns"`
	ExactNS   float64 `json:"exact_ns"`
	Ratio     float64 `json:"ratio"` // SurplusNS / ExactNS; the target is at most surplusLimit
	// SurplusWaits and ExactWaits are how the workers of each set obtained
	// their copies during the timed runs.
	SurplusWaits *runners.WaitStats `json:"surplus_waits"`
	ExactWaits   *runners.WaitStats `json:"exact_waits"`
	// SurplusWoken and ExactWoken are the wake-ups from park per timed run.
	SurplusWoken float64 `json:"surplus_woken_per_run"`
	ExactWoken   float64 `json:"exact_woken_per_run"`
}

// surplusResult is the surplus section's result.
type surplusResult struct {
	Cases []surplusCase `json:"cases"`
}

// surplusNs returns the copy counts to try in a mode on a set of size
// workers: runs that leave at least one created worker without a copy.
// Only-workers runs need n workers (n = 1, size/2, size-1); caller-runs runs
// need n-1 (n = 2, size/2, size; n = 1 runs inline and needs none).
func surplusNs(size int, callerRuns bool) []int {
	lo, cands := 1, []int{1, size / 2, size - 1}
	if callerRuns {
		lo, cands = 2, []int{2, size / 2, size}
	}
	var ns []int
	for _, n := range cands {
		if n >= lo && n <= size && (callerRuns || n < size) && !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}

// runSurplus measures runs of fewer copies than the long-lived set has
// workers against the same runs on a set with exactly the workers they need.
// The long-lived set serves both modes and every case; the exact set is new
// in every iteration and only ever sees its own case, so it starts exactly
// the workers the case needs. The two take turns per iteration.
func runSurplus(h *harness.Harness) (any, error) {
	unit := h.UnitNS()
	ls := runners.NewLongSet(h.Cfg.Max)
	defer ls.Close()
	fmt.Fprintf(h.Out, "one long-lived set of %d workers (all started) against a new set with exactly the workers the run needs;\n", h.Cfg.Max)
	fmt.Fprintf(h.Out, "work: xorshift steps, %.3f ns each; time per run, median over %d iterations; ratio = surplus / exact\n", unit, h.Cfg.Iters)
	res := &surplusResult{}
	for _, mode := range []string{runners.NameWorkgang, runners.NameCaller} {
		caller := mode == runners.NameCaller
		for _, n := range surplusNs(h.Cfg.Max, caller) {
			for _, per := range surplusCopyNS {
				res.Cases = append(res.Cases, measureSurplus(h, ls, mode, n, per, unit))
			}
		}
	}
	if len(res.Cases) == 0 {
		fmt.Fprintf(h.Out, "no run can leave a worker idle at -max %d\n", h.Cfg.Max)
	}
	printSurplus(h.Out, res.Cases)
	return res, nil
}

// measureSurplus measures one case on ls and on exact sets.
func measureSurplus(h *harness.Harness, ls *runners.LongSet, mode string, n int, per, unit float64) surplusCase {
	caller := mode == runners.NameCaller
	c := surplusCase{Mode: mode, N: n, Needed: n, Created: ls.Size, CopyNS: per}
	if caller {
		c.Needed = n - 1
	}
	c.Runs = grainRuns(h.Cfg.Runs, per*float64(n))
	gw := work.NewGrain(n, per*float64(n), unit)
	t := runners.Task(gw.Work, caller)
	sur := measure.NewCollector(c.Runs, h.Cfg.Iters, false)
	exact := measure.NewCollector(c.Runs, h.Cfg.Iters, false)
	for it := range h.Cfg.Iters {
		h.Status("surplus %s n=%d %s/copy iteration %d/%d", mode, n, measure.FmtNS(per), it+1, h.Cfg.Iters)
		sur.Measure(func() runners.Runner { return ls.Runner(n, t) })
		exact.Measure(func() runners.Runner { return runners.StartSet(n, n, t) })
	}
	ss, es := sur.Stats(), exact.Stats()
	c.SurplusNS, c.ExactNS = ss.MedianAvgNS, es.MedianAvgNS
	c.Ratio = measure.Ratio(c.SurplusNS, c.ExactNS)
	c.SurplusWaits, c.ExactWaits = ss.Waits, es.Waits
	runs := float64(c.Runs * h.Cfg.Iters)
	c.SurplusWoken, c.ExactWoken = measure.Ratio(float64(ss.Waits.Parked), runs), measure.Ratio(float64(es.Waits.Parked), runs)
	return c
}

// printSurplus prints the surplus table.
func printSurplus(w io.Writer, cs []surplusCase) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	verdict.Heading(tw, true, verdict.Plain("mode"), verdict.Plain("n"), verdict.Plain("needed"), verdict.Plain("created"), verdict.Plain("per copy"),
		verdict.Plain("runs"), verdict.Plain("surplus us"), verdict.Plain("exact us"), verdict.LowerCol("surplus/exact"),
		verdict.Plain("woken/run surplus"), verdict.Plain("woken/run exact"))
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\t\n",
			c.Mode, c.N, c.Needed, c.Created, measure.FmtNS(c.CopyNS), c.Runs, c.SurplusNS/1000, c.ExactNS/1000, c.Ratio,
			c.SurplusWoken, c.ExactWoken)
	}
	tw.Flush()
	fmt.Fprintln(w, "woken/run: wake-ups of parked workers per run (each costs the run a scheduler wake-up)")
}
