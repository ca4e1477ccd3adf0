package main

import (
	"github.com/workgang/workgang/perf/internal/contended"
	"github.com/workgang/workgang/perf/internal/forkjoin"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/interleaved"
	"github.com/workgang/workgang/perf/internal/plots"
	"github.com/workgang/workgang/perf/internal/workloads"
	"github.com/workgang/workgang/perf/openmp"
)

// sections is the table of sections, in the order they run. Adding a
// section is one more entry here: a harness.Section from the package that
// measures it (with its verdict and targets) and its plot from package
// plots; nothing else lists sections.
var sections = []harness.Section{
	forkjoin.Dispatch,
	forkjoin.Peers,
	plotted(forkjoin.Grain, plots.Grain),
	forkjoin.Surplus,
	plotted(forkjoin.Pause, plots.Pause),
	plotted(forkjoin.Kernel, plots.Kernel),
	interleaved.Section,
	plotted(workloads.Mark, plots.Mark),
	plotted(workloads.GC, plots.GC),
	{Name: "openmp", Title: openmp.Title, Run: runOpenMP, Targets: openmpTargets, Plot: plotOpenMP},
	workloads.HTTPD,
	workloads.Shared,
	workloads.Pow,
	workloads.Ports,
	contended.Section,
	harness.TargetsSection("peers", "grain", "surplus", "pause", "kernel", "gc"),
}

// plotted returns s with its plot.
func plotted(s harness.Section, p harness.PlotFunc) harness.Section {
	s.Plot = p
	return s
}
