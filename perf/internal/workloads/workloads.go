// Package workloads is the perf sections that measure the examples'
// programs on workgang and on the peers: the stealing mark and the
// mark-sweep collector of examples/gc (mark, gc), and the many-submitter
// examples (httpd, a server under load; shared, thousands of library
// instances on one set; pow, a split proof of work; ports, a library's
// fork-join helpers ported onto one set). Every result is checked against
// the serial one. Each section states its verdict or its goals.
package workloads

import "github.com/workgang/workgang/perf/internal/harness"

// The sections, in the order the perf command runs them. httpd, shared,
// pow and ports are opt-in: -scenario examples selects them.
var (
	Mark = harness.Section{Name: "mark", Title: "mark: parallel marking of a synthetic object graph (tasks toolkit worked example)",
		Run: runMark, Verdict: markVerdict}
	GC = harness.Section{Name: "gc", Title: "gc: pauses of the examples/gc mark-sweep collector, workgang vs the same phases on peers vs serial",
		Run: runGC, Verdict: gcVerdict, Targets: gcSectionTargets}
	HTTPD = harness.Section{Name: "httpd", Title: "httpd: the scatter-gather server example under closed-loop keep-alive load (req/s, wrk-style latency)",
		Run: runHTTPD, Verdict: httpdVerdict, Targets: httpdSectionTargets, OptIn: true, Example: true}
	Shared = harness.Section{Name: "shared", Title: "shared: 4096 instances at once, short parallel jobs after a 1 ms wait, on one shared set, a set each, go+WaitGroup, serial",
		Run: runShared, Targets: sharedSectionTargets, OptIn: true, Example: true}
	Pow = harness.Section{Name: "pow", Title: "pow: split proof of work, first finder stops the rest; first and later calls; the one-hash tail",
		Run: runPow, Targets: powSectionTargets, OptIn: true, Example: true}
	Ports = harness.Section{Name: "ports", Title: "ports: a library's own fork-join helpers (channel of rows, split range) ported onto one acquired set: image blur and grayscale, port / original",
		Run: runPorts, Targets: portsSectionTargets, OptIn: true, Example: true}
)
