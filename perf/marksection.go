package main

import (
	"github.com/workgang/workgang/perf/mark"
)

// Mark section sizes: the full run marks graphs of mark.DefaultObjects;
// -quick marks smaller graphs so the whole quick run stays under 20 s; runs
// shorter than -quick's (the harness's own tests) mark tiny graphs once.
const (
	quickMarkObjects = 250_000
	tinyMarkObjects  = 20_000
)

// markConfig sizes the mark section from the harness's configuration.
func markConfig(c config) mark.Config {
	mc := mark.Config{Workers: min(c.Max, 64)}
	switch {
	case c.Runs < quickRuns:
		mc.Objects, mc.Runs = tinyMarkObjects, 1
	case c.Quick:
		mc.Objects, mc.Runs = quickMarkObjects, quickIters
	default:
		mc.Runs = c.Iters // mark.DefaultObjects per graph
	}
	return mc
}

// runMark runs the parallel-marking worked example (package perf/mark):
// serial mark, errgroup static partition and the work-stealing mark on a
// worker set, per graph shape.
func runMark(h *harness) (any, error) {
	mc := markConfig(h.cfg)
	mc.Progress = func(note string) { h.status("mark %s", note) }
	return mark.Section(h.out, mc)
}
