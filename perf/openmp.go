package main

import (
	"context"
	"time"

	"github.com/workgang/workgang/perf/openmp"
)

// openmpTitle heads the openmp section.
const openmpTitle = openmp.Title

// runOpenMP is the openmp section (package openmp): workgang against libgomp
// and libomp at -max threads, sized by the run's flags (the default sizes
// are the package's: 7 rounds within 6 s).
func runOpenMP(h *harness) (any, error) {
	o := openmp.Options{Threads: h.cfg.Max, WorkerOptions: setOptions, Status: h.status}
	switch c := h.cfg; {
	case c.tiny():
		o.Rounds, o.Target = 1, 100*time.Microsecond
	case c.Quick:
		o.Rounds, o.Target, o.Budget = 3, 500*time.Microsecond, 3*time.Second
	case c.Long:
		o.Rounds, o.Target, o.Budget = 15, 2*time.Millisecond, 90*time.Second
	}
	return openmp.Run(context.Background(), h.out, o)
}

// plotOpenMP draws the openmp section's grain sweep and construct overheads.
func plotOpenMP(results map[string]any, dir string) (string, error) {
	r, ok := results["openmp"].(*openmp.Result)
	if !ok {
		return "", nil
	}
	return openmp.Plot(r, dir)
}
