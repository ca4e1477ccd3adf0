// Package harness runs the perf command's sections: it parses the command
// line, prints the header (the machine the figures were measured on), runs
// the selected sections in table order with a progress line, measures other
// programs' CPU use around each one and prints its verdict or why it is
// withheld, checks the performance targets, and writes the JSON report and
// the plots.
//
// A section is one entry of a table of Sections that the command hands to
// Command; the harness knows no section by name.
package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/perf/internal/work"
)

// Section is one part of the perf test: one entry of the command's table.
type Section struct {
	// Name selects the section with -scenario and keys its JSON result.
	Name string
	// Title heads its output.
	Title string
	// Needs names sections whose results Run reads (from Harness.Results).
	// They must come earlier in the table; selecting this section selects
	// them too.
	Needs []string
	// Run measures, prints to h.Out and returns a JSON-encodable result. It
	// must close every goroutine it starts before it returns.
	Run func(h *Harness) (any, error)
	// Verdict, if set, returns the section's verdict from its result: what
	// was compared, which is better and by how much, a line each. The
	// harness prints it after the tables, or says why it withholds it.
	Verdict func(h *Harness, res any) []string
	// Targets, if set, returns the project's performance goals on the
	// section's result, checked: the targets section prints them.
	Targets func(h *Harness, res any) []Target
	// Plot, if set, draws the section's figures (-svg).
	Plot PlotFunc
	// OptIn keeps the section out of -scenario all: it runs only when named
	// (or, for targets, with -targets).
	OptIn bool
	// Example puts the section in -scenario examples: the examples' own
	// measurements.
	Example bool
}

// PlotFunc writes the figures of a finished section, whose result is res,
// to dir, each under caption (where and how it was measured); note, when
// not "", ends every figure's title: the section's verdict was withheld
// (verdict.TitleNote). It returns the files' names, or "" when the result
// has nothing to plot.
type PlotFunc func(res any, dir, caption, note string) (string, error)

// Command is the perf command: the table of its sections, in the order they
// run, and what to set up once the flags are parsed.
type Command struct {
	Sections []Section
	// Prepare, if set, is called with the parsed flags before the first
	// section runs (and before the header is measured).
	Prepare func(Config)
}

// Run parses args, runs the selected sections printing to stdout (progress
// goes to stderr) and writes the plots and the JSON report if asked. It
// returns the process exit code: 0 on success and for -h (as Go's own
// tools), 2 for bad flags, 1 for any other failure.
func (c Command) Run(args []string, stdout, stderr io.Writer) int {
	cfg, err := c.Parse(args, stderr)
	if err == errHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "perf:", err)
		return 2
	}
	if c.Prepare != nil {
		c.Prepare(cfg)
	}
	h := &Harness{Cfg: cfg, Out: stdout, progress: newProgress(stderr), Results: map[string]any{}, sections: c.Sections, withheld: map[string]string{}}
	rep, err := h.runAll()
	if err != nil {
		fmt.Fprintln(stderr, "perf:", err)
		return 1
	}
	if cfg.SVG != "" {
		if err := h.writePlots(cfg.SVG); err != nil {
			fmt.Fprintln(stderr, "perf: -svg:", err)
			return 1
		}
	}
	if cfg.JSON != "" {
		if err := writeJSON(cfg.JSON, rep); err != nil {
			fmt.Fprintln(stderr, "perf:", err)
			return 1
		}
	}
	return 0
}

// Parse parses the command line for c's sections; usage and flag errors go
// to stderr. After -h or -help it returns flag.ErrHelp.
func (c Command) Parse(args []string, stderr io.Writer) (Config, error) {
	return parseFlags(args, stderr, c.Sections)
}

// defaultRunSeconds is the time the default run (no flags) is sized to
// finish in on an idle 2-CPU machine, the one number docs/perf.md states
// (where the measured totals are). The sections are sized to stay well
// inside it, mark and gc together within a third of it.
const defaultRunSeconds = 30

// Harness is the state shared by the sections of one perf run.
type Harness struct {
	Cfg Config
	// Out is where the sections print their tables.
	Out    io.Writer
	Header Header
	// Results holds each finished section's result, by name, for the
	// sections that need it and for the JSON report.
	Results map[string]any

	progress *progress
	sections table
	// withheld is, per section whose verdict was withheld, the note its
	// plots' titles carry.
	withheld map[string]string
	// unit is the calibrated cost of one unit of work (work.Burn) in ns, 0
	// until a section first asks for it.
	unit float64
}

// UnitNS returns the cost of one unit of work.Burn in ns, calibrating it
// once per run so that every section's work is sized alike.
func (h *Harness) UnitNS() float64 {
	if h.unit == 0 {
		h.unit = work.Calibrate()
	}
	return h.unit
}

// Status shows a progress line for the section in progress.
func (h *Harness) Status(format string, args ...any) {
	h.progress.update(format, args...)
}

// ClearStatus removes the progress line, before a section prints.
func (h *Harness) ClearStatus() { h.progress.clear() }

// SchemaVersion is the version of the JSON report's layout (described in
// docs/perf.md): it changes whenever a field changes its meaning or place.
const SchemaVersion = 3

// Report is the JSON document -json writes (described in docs/perf.md).
type Report struct {
	SchemaVersion int            `json:"schema_version"`
	Header        Header         `json:"header"`
	Config        Config         `json:"config"`
	Sections      map[string]any `json:"sections"`
	LoadAvgEnd    string         `json:"loadavg_end"` // /proc/loadavg after the last section
	// OthersCPUs is, per section, how many CPUs other programs used on
	// average while it ran (absent where the system cannot tell).
	OthersCPUs map[string]float64 `json:"others_cpus"`
}

// runAll prints the header and runs the selected sections in table order.
func (h *Harness) runAll() (*Report, error) {
	begin := time.Now()
	rep := &Report{SchemaVersion: SchemaVersion, Config: h.Cfg, Sections: h.Results, OthersCPUs: map[string]float64{}}
	h.Header = readHeader(h.Cfg)
	h.Header.print(h.Out)
	if h.Cfg.Compete > 0 {
		c := startCompetitors(h.Cfg.Compete)
		defer c.stopAll()
	}
	for _, name := range h.Cfg.Scenarios {
		s := h.sections.find(name)
		fmt.Fprintf(h.Out, "\n== %s ==\n", s.Title)
		start, probe := time.Now(), verdict.Start()
		res, err := s.Run(h)
		h.progress.clear()
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", name, err)
		}
		h.Results[name] = res
		others, ok := probe.Others()
		if ok {
			rep.OthersCPUs[name] = others
		}
		h.judge(s, res, others, ok)
		fmt.Fprintf(h.Out, "(%s: %.1f s)\n", name, time.Since(start).Seconds())
	}
	end := LoadAvg()
	fmt.Fprintf(h.Out, "\nload average at the end: %s\n", end)
	fmt.Fprintf(h.Out, "total: %.1f s", time.Since(begin).Seconds())
	if c := h.Cfg; !c.Quick && !c.Long && c.Iters == DefaultIters && c.Runs == DefaultRuns && slices.Equal(c.Scenarios, h.sections.defaults()) {
		fmt.Fprintf(h.Out, " (the default run is sized to finish within %d s on an idle 2-CPU machine)", defaultRunSeconds)
	}
	fmt.Fprintln(h.Out)
	rep.Header, rep.LoadAvgEnd = h.Header, end
	return rep, nil
}

// judge prints the verdict of section s on its result res, or, when other
// programs used others CPUs (known when ok) or more than verdict.LoadedShare
// of them, why it is withheld, which the section's plots' titles then say.
func (h *Harness) judge(s *Section, res any, others float64, ok bool) {
	if s.Verdict == nil {
		return
	}
	if why := verdict.LoadWarning(others, ok); why != "" {
		verdict.Withheld(h.Out, why)
		h.withheld[s.Name] = verdict.TitleNote(others)
		return
	}
	verdict.Print(h.Out, s.Verdict(h, res))
}

// writePlots writes the figures of every section that has a plot and a
// result to dir (created if missing), in table order, captioned with the
// header and titled with why the verdict was withheld if it was, and lists
// the files on h.Out.
func (h *Harness) writePlots(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range h.sections {
		res, ok := h.Results[s.Name]
		if s.Plot == nil || !ok {
			continue
		}
		name, err := s.Plot(res, dir, h.Header.Caption(), h.withheld[s.Name])
		if err != nil {
			return err
		}
		if name != "" {
			fmt.Fprintf(h.Out, "wrote %s\n", name)
		}
	}
	return nil
}

// writeJSON writes rep, indented, to the file called path.
func writeJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Captured is one run of a Command with -json: its exit code, what it wrote
// to stdout and stderr, and the JSON file (the sections' tests read them).
type Captured struct {
	Code             int
	Out, Errw, JSONB string
}

// Capture runs c with args and -json to a temporary file, and returns what
// the run wrote; Code is -1 if the file could not be made.
func (c Command) Capture(args []string) (r Captured) {
	dir, err := os.MkdirTemp("", "perf-capture-*")
	if err != nil {
		return Captured{Code: -1, Errw: err.Error()}
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "out.json")
	var out, errw bytes.Buffer
	r.Code = c.Run(append(append([]string{}, args...), "-json", path), &out, &errw)
	b, _ := os.ReadFile(path)
	r.Out, r.Errw, r.JSONB = out.String(), errw.String(), string(b)
	return r
}
