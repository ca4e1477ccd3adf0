package main

import "github.com/workgang/workgang/perf/internal/harness"

// sections is the table of sections, in the order they run. Adding a
// section is one more entry here, with its run function in a file named
// after the section (a directory of its own for a larger one), its verdict,
// its targets and its plot; nothing else lists sections.
var sections = []harness.Section{
	{Name: "dispatch", Title: "dispatch: workgang, empty task, per iteration (original WorkerThreads test)", Run: runDispatch, Verdict: dispatchVerdict},
	{Name: "peers", Title: "peers: empty task, side by side", Run: runPeers, Verdict: peersVerdict, Targets: peersTargets},
	{Name: "grain", Title: "grain: speedup over serial for W of CPU work split across n copies", Run: runGrain, Verdict: grainVerdict, Targets: grainTargets, Plot: plotGrain},
	{Name: "surplus", Title: "surplus: runs of fewer copies than the long-lived set has workers, against a set with exactly the workers needed", Run: runSurplus, Verdict: surplusVerdict, Targets: surplusSectionTargets},
	{Name: "pause", Title: "pause: a scripted collector-like pause of phases of varying n and mode, on one long-lived set", Run: runPause, Verdict: pauseVerdict, Targets: pauseSectionTargets, Plot: plotPause},
	{Name: "kernel", Title: "kernel: spectral-norm, 40 short phases per solve, on one long-lived set", Run: runKernel, Verdict: kernelVerdict, Targets: kernelSectionTargets, Plot: plotKernel},
	{Name: "mark", Title: "mark: parallel marking of a synthetic object graph (tasks toolkit worked example)", Run: runMark, Verdict: markVerdict, Plot: plotMark},
	{Name: "gc", Title: "gc: pauses of the examples/gc mark-sweep collector, workgang vs the same phases on peers vs serial", Run: runGC, Verdict: gcVerdict, Targets: gcSectionTargets, Plot: plotGC},
	{Name: "openmp", Title: openmpTitle, Run: runOpenMP, Targets: openmpSectionTargets, Plot: plotOpenMP},
	{Name: "httpd", Title: "httpd: the scatter-gather server example under closed-loop keep-alive load (req/s, wrk-style latency)", Run: runHTTPD, Targets: httpdSectionTargets, OptIn: true, Example: true},
	{Name: "shared", Title: "shared: 4096 instances at once, short parallel jobs after a 1 ms wait, on one shared set, a set each, go+WaitGroup, serial", Run: runShared, Targets: sharedSectionTargets, OptIn: true, Example: true},
	{Name: "pow", Title: "pow: split proof of work, first finder stops the rest; first and later calls; the one-hash tail", Run: runPow, Targets: powSectionTargets, OptIn: true, Example: true},
	{Name: "ports", Title: "ports: a library's own fork-join helpers (channel of rows, split range) ported onto one acquired set: image blur and grayscale, port / original", Run: runPorts, Targets: portsSectionTargets, OptIn: true, Example: true},
	{Name: "contended", Title: "contended: speedup over serial on a shared machine (busy processes, one CPU, a CPU quota), each condition in a process of its own", Run: runContended, OptIn: true},
	harness.TargetsSection("peers", "grain", "surplus", "pause", "kernel", "gc"),
}
