package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/openmp"
)

// The openmp section's wiring into the perf command: package openmp
// measures and draws; here it is sized by the run's flags, and its
// mixed-process figures are checked against the project's goal.

// runOpenMP is the openmp section (package openmp): workgang against libgomp
// and libomp at -max threads, and its mixed-process mode, sized by the run's
// flags (the default sizes are the package's: 7 rounds within 6 s).
func runOpenMP(h *harness.Harness) (any, error) {
	o := openmp.Options{Threads: h.Cfg.Max, WorkerOptions: runners.Options(), Status: h.Status}
	switch c := h.Cfg; {
	case c.Tiny():
		o.Rounds, o.Target = 1, 100*time.Microsecond
		o.Mixed.Batch, o.Mixed.Batches = 2, 2
	case c.Quick:
		o.Rounds, o.Target, o.Budget = 3, 500*time.Microsecond, 3*time.Second
		o.Mixed.Batches = 16
	case c.Long:
		o.Rounds, o.Target, o.Budget = 15, 2*time.Millisecond, 90*time.Second
	}
	return openmp.Run(context.Background(), h.Out, o)
}

// plotOpenMP draws the openmp section's grain sweep, construct overheads and
// mixed-process ratios. The section judges and withholds its own
// comparisons (the harness passes no note), and its plot says so itself.
func plotOpenMP(res any, dir, caption, _ string) (string, error) {
	r, ok := res.(*openmp.Result)
	if !ok {
		return "", nil
	}
	return openmp.Plot(r, dir, caption)
}

const reasonMixed = "an application mixes libraries: workgang's constructs must not slow down because other goroutines (go+WaitGroup, errgroup) ran between them"

// openmpTargets checks every construct and mode of the mixed-process mode:
// at the worst of its gaps, mixed over alone.
func openmpTargets(_ *harness.Harness, res any) []harness.Target {
	r := res.(*openmp.Result)
	if r.Mixed == nil {
		return nil
	}
	var ts []harness.Target
	for _, row := range r.Mixed.Rows {
		_, gi := row.Worst()
		if gi >= len(row.Mixed) {
			continue
		}
		worst := row.Mixed[gi]
		var ratios, shares []string
		for i, s := range row.Mixed {
			ratios = append(ratios, fmt.Sprintf("W=%s %.2fx", measure.FmtNS(r.Mixed.Gaps[i].RequestedNS), *s.Ratio))
			shares = append(shares, fmt.Sprintf("%.0f%%", 100*s.Copies.WorkerShare()))
		}
		ts = append(ts, harness.RatioTarget(fmt.Sprintf("openmp mixed/alone: %s %s", row.Title, row.Mode), reasonMixed,
			worst.MedianNS, row.Alone.MedianNS, openmp.MixedLimit, false,
			fmt.Sprintf("%s; workers ran %.0f%% of the copies alone, %s mixed", strings.Join(ratios, ", "),
				100*row.Alone.Copies.WorkerShare(), strings.Join(shares, ", "))))
	}
	return ts
}
