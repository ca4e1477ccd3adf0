// Package forkjoin is the perf sections that measure fork-join itself, on
// work the harness calibrates: what a run of an empty task costs, workgang's
// modes alone (dispatch, the original WorkerThreads test) and beside the
// peers (peers); from which grain on a run pays (grain); what idle workers
// of a long-lived set cost a run that does not need them (surplus); a
// scripted collector-like pause of short phases of varying n (pause); and a
// numeric kernel of many short phases (kernel). Each section states its
// verdict and its performance goals.
package forkjoin

import "github.com/workgang/workgang/perf/internal/harness"

// The sections, in the order the perf command runs them.
var (
	Dispatch = harness.Section{Name: "dispatch", Title: "dispatch: workgang, empty task, per iteration (original WorkerThreads test)",
		Run: runDispatch, Verdict: dispatchVerdict}
	Peers = harness.Section{Name: "peers", Title: "peers: empty task, side by side",
		Run: runPeers, Verdict: peersVerdict, Targets: peersTargets}
	Grain = harness.Section{Name: "grain", Title: "grain: speedup over serial for W of CPU work split across n copies",
		Run: runGrain, Verdict: grainVerdict, Targets: grainTargets}
	Surplus = harness.Section{Name: "surplus", Title: "surplus: runs of fewer copies than the long-lived set has workers, against a set with exactly the workers needed",
		Run: runSurplus, Verdict: surplusVerdict, Targets: surplusSectionTargets}
	Pause = harness.Section{Name: "pause", Title: "pause: a scripted collector-like pause of phases of varying n and mode, on one long-lived set",
		Run: runPause, Verdict: pauseVerdict, Targets: pauseSectionTargets}
	Kernel = harness.Section{Name: "kernel", Title: "kernel: spectral-norm, 40 short phases per solve, on one long-lived set",
		Run: runKernel, Verdict: kernelVerdict, Targets: kernelSectionTargets}
)
