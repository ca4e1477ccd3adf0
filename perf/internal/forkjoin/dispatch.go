package forkjoin

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
)

// level is a parallelism of the test: full, half or min.
type level struct {
	Label string `json:"label"`
	N     int    `json:"n"`
}

// levels returns full (size), half (size/2) and min (1) parallelism, as
// the original test has them, each n once: half is left out where it equals
// min or full (size 2 or 1), full where it equals min (size 1).
func levels(size int) []level {
	var ls []level
	if size > 1 {
		ls = append(ls, level{"full", size})
	}
	if half := size / 2; half > 1 && half < size {
		ls = append(ls, level{"half", half})
	}
	return append(ls, level{"min", 1})
}

// shownLevel is a level as the sections print it. The perf test is defined
// at full, half and min parallelism, so every section prints the three; a
// level with the n of a measured one (half at -max 2 or 3, full and half at
// -max 1) is not measured twice: SameAs names the measured level.
type shownLevel struct {
	level
	SameAs string
}

// shownLevels returns full, half and min, in that order, each with the
// measured level of the same n where it is not measured itself.
func shownLevels(size int) []shownLevel {
	measured := levels(size)
	var out []shownLevel
	for _, lv := range []level{{"full", size}, {"half", max(1, size/2)}, {"min", 1}} {
		sl := shownLevel{level: lv}
		if !slices.Contains(measured, lv) {
			for _, m := range measured {
				if m.N == lv.N {
					sl.SameAs = m.Label
				}
			}
		}
		out = append(out, sl)
	}
	return out
}

// sameNote is the line a level measured under another's name prints in
// place of its figures.
func (sl shownLevel) sameNote() string {
	return fmt.Sprintf("%s (n=%d): same n as %s: measured once, the figures under %s (n=%d) are this level's", sl.Label, sl.N, sl.SameAs, sl.SameAs, sl.N)
}

// printLevels says which levels a -max measures, and which have the n of
// another.
func printLevels(w io.Writer, size int) {
	var parts []string
	for _, sl := range shownLevels(size) {
		p := fmt.Sprintf("%s n=%d", sl.Label, sl.N)
		if sl.SameAs != "" {
			p += fmt.Sprintf(" (same n as %s, measured once)", sl.SameAs)
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(w, "levels: %s\n", strings.Join(parts, ", "))
}

// dispatchSetup is one row of the dispatch section.
type dispatchSetup struct {
	level
	Mode string `json:"mode"` // workers or workers+caller
	measure.SetupStats
}

// runDispatch measures workgang alone at each level and mode, printing each
// iteration as the WorkerThreads perf test does: first on a fresh set per
// iteration, then on one long-lived set created at -max with all its workers
// started and shared by every level and mode (as the WorkerThreads test and
// every embedder use one set).
func runDispatch(h *harness.Harness) (any, error) {
	fmt.Fprintf(h.Out, "%d iterations x %d runs per setup, %d warm-up runs; \"fresh\": a new set per iteration,\n",
		h.Cfg.Iters, h.Cfg.Runs, measure.WarmCount(h.Cfg.Runs))
	fmt.Fprintf(h.Out, "\"one set\": one set of %d workers, all started, shared by every level and mode below\n", h.Cfg.Max)
	printLevels(h.Out, h.Cfg.Max)
	ls := runners.NewLongSet(h.Cfg.Max)
	defer ls.Close()
	var res []dispatchSetup
	for _, sl := range shownLevels(h.Cfg.Max) {
		if sl.SameAs != "" {
			fmt.Fprintf(h.Out, "\n%s\n", sl.sameNote())
			continue
		}
		lv := sl.level
		for _, im := range append([]runners.Impl{runners.Find(runners.NameWorkgang), runners.Find(runners.NameCaller)}, runners.OneSetImpls(ls)...) {
			c := measure.NewCollector(h.Cfg.Runs, h.Cfg.Iters, true)
			for it := range h.Cfg.Iters {
				h.Status("dispatch %s n=%d %s iteration %d/%d", lv.Label, lv.N, im.Name, it+1, h.Cfg.Iters)
				c.Measure(func() runners.Runner { return im.Start(h.Cfg.Max, lv.N, runners.Empty) })
			}
			s := dispatchSetup{level: lv, Mode: im.Name, SetupStats: c.Stats()}
			printDispatchSetup(h.Out, s)
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
	if s.Waits != nil {
		runs := uint64(s.Runs * len(s.Iters))
		fmt.Fprintf(w, "  timed batches: %s\n", sharesOf(*s.Waits, uint64(s.N)*runs, runs))
	}
}

// waitShares is how the workers of a setup came to their copies, each as a
// share of the total it belongs to.
type waitShares struct {
	// Workers is the share of all copies that workers ran (the caller ran
	// the rest).
	Workers float64
	// Ready, Spun and Woken split the workers' sightings of runs: a worker
	// sees a run once whether or not it gets a copy of it (the caller may
	// have taken them all), found already posted, posted while it spun, or
	// after it was woken from park. They sum to 1. (They are not shares of
	// the copies: with caller-runs, workers see many runs whose copies the
	// caller took, so sightings can outnumber worker copies many times.)
	Ready, Spun, Woken float64
	// Seen is the number of sightings, PerRun the sightings per run.
	Seen   uint64
	PerRun float64
}

// sharesOf computes the shares of w for runs runs of copies copies in all.
func sharesOf(w runners.WaitStats, copies, runs uint64) waitShares {
	seen := float64(w.Ready + w.Spun + w.Parked)
	return waitShares{
		Seen:    w.Ready + w.Spun + w.Parked,
		Workers: measure.Ratio(float64(w.WorkerCopies), float64(copies)),
		Ready:   measure.Ratio(float64(w.Ready), seen),
		Spun:    measure.Ratio(float64(w.Spun), seen),
		Woken:   measure.Ratio(float64(w.Parked), seen),
		PerRun:  measure.Ratio(seen, float64(runs)),
	}
}

// String says the shares in a sentence.
func (s waitShares) String() string {
	return fmt.Sprintf("workers ran %.0f%% of the copies, the caller %.0f%%; workers saw a run %d times (%.2f per run): "+
		"%.0f%% of the times it was already posted, %.0f%% it was posted while they spun, %.0f%% they were woken from park",
		100*s.Workers, 100*(1-s.Workers), s.Seen, s.PerRun, 100*s.Ready, 100*s.Spun, 100*s.Woken)
}
