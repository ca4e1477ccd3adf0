package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// level is a parallelism of the test: full, half or min.
type level struct {
	Label string `json:"label"`
	N     int    `json:"n"`
}

// levels returns full (size), half (size/2, at least 1) and min (1)
// parallelism, as the original test has them, even where two coincide.
func levels(size int) []level {
	return []level{{"full", size}, {"half", max(1, size/2)}, {"min", 1}}
}

// emptyWork is the empty task of the dispatch and peers sections.
func emptyWork(int) {}

// dispatchSetup is one row of the dispatch section.
type dispatchSetup struct {
	level
	Mode string `json:"mode"` // workers or workers+caller
	setupStats
}

// runDispatch measures workgang alone at each level and mode, printing each
// iteration as the WorkerThreads perf test does: first on a fresh set per
// iteration, then on one long-lived set created at -max with all its workers
// started and shared by every level and mode (as the WorkerThreads test and
// every embedder use one set).
func runDispatch(h *harness) (any, error) {
	fmt.Fprintf(h.out, "%d iterations x %d runs per setup, %d warm-up runs; \"fresh\": a new set per iteration,\n",
		h.cfg.Iters, h.cfg.Runs, warmCount(h.cfg.Runs))
	fmt.Fprintf(h.out, "\"one set\": one set of %d workers, all started, shared by every level and mode below\n", h.cfg.Max)
	ls := newLongSet(h.cfg.Max)
	defer ls.close()
	var res []dispatchSetup
	for _, lv := range levels(h.cfg.Max) {
		for _, im := range append([]impl{findImpl(nameWorkers), findImpl(nameCaller)}, oneSetImpls(ls)...) {
			c := newCollector(h.cfg.Runs, h.cfg.Iters, true)
			for it := range h.cfg.Iters {
				h.status("dispatch %s n=%d %s iteration %d/%d", lv.Label, lv.N, im.name, it+1, h.cfg.Iters)
				c.measure(func() runner { return im.start(h.cfg.Max, lv.N, emptyWork) })
			}
			s := dispatchSetup{level: lv, Mode: im.name, setupStats: c.stats()}
			printDispatchSetup(h.out, s)
			res = append(res, s)
		}
	}
	return res, nil
}

// printDispatchSetup prints one setup: a line per iteration, then the
// latency percentiles.
func printDispatchSetup(w io.Writer, s dispatchSetup) {
	fmt.Fprintf(w, "\n%s (n=%d), %s\n", s.Label, s.N, s.Mode)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "iter\ttotal us\tavg us\tmax us\tallocs/run\t")
	for i, it := range s.Iters {
		maxUS := "-"
		if it.MaxNS != nil {
			maxUS = fmt.Sprintf("%.1f", *it.MaxNS/1000)
		}
		fmt.Fprintf(tw, "%d\t%.1f\t%.3f\t%s\t%.2f\t\n", i+1, it.TotalNS/1000, it.AvgNS/1000, maxUS, it.AllocsPerRun)
	}
	tw.Flush()
	fmt.Fprintf(w, "  median avg %.3f us; per run (incl. one clock read): p50 %.3f us, p90 %.3f us, p99 %.3f us, max %.1f us; %d allocs/run\n",
		s.MedianAvgNS/1000, s.P50NS/1000, s.P90NS/1000, s.P99NS/1000, s.MaxNS/1000, s.AllocsPerRun)
	if wt := s.Waits; wt != nil && wt.WorkerCopies > 0 {
		c := float64(wt.WorkerCopies)
		all := float64(s.N * s.Runs * len(s.Iters))
		fmt.Fprintf(w, "  timed batches: workers ran %.0f%% of copies; of those %.0f%% found the copy ready, %.0f%% got it while spinning, %.0f%% were woken from park\n",
			100*c/all, 100*float64(wt.Ready)/c, 100*float64(wt.Spun)/c, 100*float64(wt.Parked)/c)
	}
}
