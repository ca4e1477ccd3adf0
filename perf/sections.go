package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/perf/internal/work"
)

// section is one part of the perf test: one entry of the sections table.
type section struct {
	// name selects the section with -scenario and keys its JSON result.
	name string
	// title heads its output.
	title string
	// needs names sections whose results run reads (from harness.results).
	// They must come earlier in the table; selecting this section selects
	// them too.
	needs []string
	// run measures, prints to h.out and returns a JSON-encodable result. It
	// must close every goroutine it starts before it returns.
	run func(h *harness) (any, error)
	// summary, if set, returns the section's verdict from its result: what
	// was compared, which is better and by how much, a line each. The
	// harness prints it after the tables, or says why it withholds it.
	summary func(h *harness, res any) []string
	// optIn keeps the section out of -scenario all: it runs only when named
	// (or, for targets, with -targets).
	optIn bool
}

// sections is the table of sections, in the order they run. Adding a
// section is one more entry here, with its run function in a file named
// after the section (a directory of its own for a larger one); nothing else
// lists sections. A section's plot, if any, is one more entry in plots
// (plots.go).
var sections = []section{
	{name: "dispatch", title: "dispatch: workgang, empty task, per iteration (original WorkerThreads test)", run: runDispatch, summary: dispatchVerdict},
	{name: "peers", title: "peers: empty task, side by side", run: runPeers, summary: peersVerdict},
	{name: "grain", title: "grain: speedup over serial for W of CPU work split across n copies", run: runGrain, summary: grainVerdict},
	{name: "surplus", title: "surplus: runs of fewer copies than the long-lived set has workers, against a set with exactly the workers needed", run: runSurplus, summary: surplusVerdict},
	{name: "pause", title: "pause: a scripted collector-like pause of phases of varying n and mode, on one long-lived set", run: runPause, summary: pauseVerdict},
	{name: "kernel", title: "kernel: spectral-norm, 40 short phases per solve, on one long-lived set", run: runKernel, summary: kernelVerdict},
	{name: "mark", title: "mark: parallel marking of a synthetic object graph (tasks toolkit worked example)", run: runMark, summary: markVerdict},
	{name: "gc", title: "gc: pauses of the examples/gc mark-sweep collector, workgang vs the same phases on peers vs serial", run: runGC, summary: gcVerdict},
	{name: "openmp", title: openmpTitle, run: runOpenMP},
	{name: "httpd", title: "httpd: the scatter-gather server example under closed-loop keep-alive load (req/s, wrk-style latency)", run: runHTTPD, optIn: true},
	{name: "shared", title: "shared: 4096 instances at once, short parallel jobs after a 1 ms wait, on one shared set, a set each, go+WaitGroup, serial", run: runShared, optIn: true},
	{name: "pow", title: "pow: split proof of work, first finder stops the rest; first and later calls; the one-hash tail", run: runPow, optIn: true},
	{name: "ports", title: "ports: a library's own fork-join helpers (channel of rows, split range) ported onto one acquired set: image blur and grayscale, port / original", run: runPorts, optIn: true},
	{name: "contended", title: "contended: speedup over serial on a shared machine (busy processes, one CPU, a CPU quota), each condition in a process of its own", run: runContended, optIn: true},
	{name: "targets", title: "targets: the project's performance goals, checked on this run's figures (opt-in: -targets)", needs: []string{"peers", "grain", "surplus", "pause", "kernel", "gc"}, run: runTargets, optIn: true},
}

// exampleSections are the opt-in sections that run the examples' own
// measurements (many submitters, a library's ported helpers); -scenario
// examples selects them all.
var exampleSections = []string{"httpd", "shared", "pow", "ports"}

// sectionNames returns the names in the table, in order.
func sectionNames() []string {
	names := make([]string, len(sections))
	for i, s := range sections {
		names[i] = s.name
	}
	return names
}

// defaultSections returns the sections -scenario all selects: all but the
// opt-in ones, in table order.
func defaultSections() []string {
	var names []string
	for _, s := range sections {
		if !s.optIn {
			names = append(names, s.name)
		}
	}
	return names
}

// findSection returns the table entry called name, or nil.
func findSection(name string) *section {
	for i := range sections {
		if sections[i].name == name {
			return &sections[i]
		}
	}
	return nil
}

// defaultRunSeconds is the time the default run (no flags) is sized to
// finish in on an idle 2-CPU machine, the one number docs/perf.md states
// (where the measured totals are). The sections are sized to stay well
// inside it, mark and gc together within a third of it.
const defaultRunSeconds = 30

// harness is the state shared by the sections of one perf run.
type harness struct {
	cfg      config
	out      io.Writer
	progress *progress
	header   header
	// results holds each finished section's result, by name, for the
	// sections that need it and for the JSON report.
	results map[string]any
	// unit is the calibrated cost of one unit of work (burn) in ns, 0 until
	// a section first asks for it.
	unit float64
}

// unitNS returns the cost of one unit of burn in ns, calibrating it once per
// harness so that every section's work is sized alike.
func (h *harness) unitNS() float64 {
	if h.unit == 0 {
		h.unit = work.Calibrate()
	}
	return h.unit
}

// schemaVersion is the version of the JSON report's layout (described in
// docs/perf.md): it changes whenever a field changes its meaning or place.
const schemaVersion = 3

// report is the JSON document -json writes (described in docs/perf.md).
type report struct {
	SchemaVersion int            `json:"schema_version"`
	Header        header         `json:"header"`
	Config        config         `json:"config"`
	Sections      map[string]any `json:"sections"`
	LoadAvgEnd    string         `json:"loadavg_end"` // /proc/loadavg after the last section
	// OthersCPUs is, per section, how many CPUs other programs used on
	// average while it ran (absent where the system cannot tell).
	OthersCPUs map[string]float64 `json:"others_cpus"`
}

// newHarness returns a harness printing results to out and progress to errw.
func newHarness(cfg config, out, errw io.Writer) *harness {
	return &harness{cfg: cfg, out: out, progress: newProgress(errw), results: map[string]any{}}
}

// runAll prints the header and runs the selected sections in table order.
func (h *harness) runAll() (*report, error) {
	runners.Pin(h.cfg.Pin)
	begin := time.Now()
	rep := &report{SchemaVersion: schemaVersion, Config: h.cfg, Sections: h.results, OthersCPUs: map[string]float64{}}
	h.header = readHeader(h.cfg)
	h.header.print(h.out)
	if h.cfg.Compete > 0 {
		c := startCompetitors(h.cfg.Compete)
		defer c.stopAll()
	}
	for _, name := range h.cfg.Scenarios {
		s := findSection(name)
		fmt.Fprintf(h.out, "\n== %s ==\n", s.title)
		start, probe := time.Now(), verdict.Start()
		res, err := s.run(h)
		h.progress.clear()
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", name, err)
		}
		h.results[name] = res
		others, ok := probe.Others()
		if ok {
			rep.OthersCPUs[name] = others
		}
		if s.summary != nil {
			if why := verdict.LoadWarning(others, ok); why != "" {
				verdict.Withheld(h.out, why)
			} else {
				verdict.Print(h.out, s.summary(h, res))
			}
		}
		fmt.Fprintf(h.out, "(%s: %.1f s)\n", name, time.Since(start).Seconds())
	}
	end := loadAvg()
	fmt.Fprintf(h.out, "\nload average at the end: %s\n", end)
	fmt.Fprintf(h.out, "total: %.1f s", time.Since(begin).Seconds())
	if c := h.cfg; !c.Quick && !c.Long && c.Iters == defaultIters && c.Runs == defaultRuns && slices.Equal(c.Scenarios, defaultSections()) {
		fmt.Fprintf(h.out, " (the default run is sized to finish within %d s on an idle 2-CPU machine)", defaultRunSeconds)
	}
	fmt.Fprintln(h.out)
	rep.Header, rep.LoadAvgEnd = h.header, end
	return rep, nil
}

// status shows a progress line for the section in progress.
func (h *harness) status(format string, args ...any) {
	h.progress.update(format, args...)
}

// writeJSON writes rep, indented, to the file called path.
func writeJSON(path string, rep *report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
