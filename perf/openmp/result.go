package openmp

import (
	"fmt"
	"github.com/workgang/workgang/perf/internal/verdict"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Result is the section's JSON result. Figures are in ns; a figure that
// does not exist (a mode that cannot express a construct, a runtime that did
// not run) is null.
type Result struct {
	Threads       int     `json:"threads"`
	Rounds        int     `json:"rounds"`         // rounds run: RoundsPlanned unless the budget ran out
	RoundsPlanned int     `json:"rounds_planned"` // rounds asked for
	TargetNS      float64 `json:"target_ns"`      // the length one measurement was sized to
	DelayNS       float64 `json:"delay_ns"`       // the delay per thread asked for
	LoopIters     int     `json:"loop_iters"`     // iterations of a schedule test's loop
	// Env holds the OMP_, GOMP_ and KMP_ variables of the environment the
	// runtimes ran with (they set how the runtimes wait; none by default).
	Env []string `json:"env"`
	// LoadAvg is /proc/loadavg's 1-minute load when the section began (null
	// where the system has none).
	LoadAvg *float64 `json:"loadavg_begin"`
	// OthersCPUs is how many CPUs other programs used on average while the
	// section measured (null where the system cannot tell); from a quarter
	// of the CPUs on, the printed comparisons are withheld.
	OthersCPUs *float64 `json:"others_cpus"`
	// withheld says why the printed comparisons are withheld ("" when they
	// are not).
	withheld string
	// Runtimes are libgomp, libomp and workgang: each one's calibration, or
	// why it did not run.
	Runtimes   []Runtime   `json:"runtimes"`
	Constructs []Construct `json:"constructs"`
	Grain      Grain       `json:"grain"`
	// Mixed is the mixed-process mode (null when it was off).
	Mixed *Mixed `json:"mixed"`
}

// Runtime is one runtime's process.
type Runtime struct {
	Name    string `json:"name"`
	Command string `json:"command"` // the compiler, or "go" for workgang
	// OpenMP is the _OPENMP date the runtime claims (0 for workgang).
	OpenMP     int     `json:"openmp"`
	NSPerIter  float64 `json:"ns_per_iter"` // the kernel's calibrated cost
	DelayIters int     `json:"delay_iters"`
	DelayNS    float64 `json:"delay_ns"` // the delay as calibrated
	// Skipped says why the runtime did not run ("" when it did).
	Skipped string `json:"skipped,omitempty"`
}

// Construct is one construct's rows.
type Construct struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	Rows  []Row  `json:"rows"`
}

// Row is one runtime's (and mode's) overhead for a construct.
type Row struct {
	Runtime string `json:"runtime"`
	Mode    string `json:"mode"` // "" for an OpenMP runtime
	// MedianNS, MinNS and MaxNS summarise RoundsNS; null when not
	// expressible.
	MedianNS *float64  `json:"median_ns"`
	MinNS    *float64  `json:"min_ns"`
	MaxNS    *float64  `json:"max_ns"`
	RoundsNS []float64 `json:"rounds_ns"`
	// Ratio is MedianNS over the best OpenMP runtime's median for the
	// construct; null without one.
	Ratio *float64 `json:"ratio_to_best_openmp"`
	// Note says why the mode cannot express the construct.
	Note string `json:"note,omitempty"`
}

// Grain is the grain sweep.
type Grain struct {
	GrainsNS []float64  `json:"grains_ns"`
	Rows     []GrainRow `json:"rows"`
}

// GrainRow is one runtime's (and mode's) speedups, per grain.
type GrainRow struct {
	Runtime string    `json:"runtime"`
	Mode    string    `json:"mode"`
	Speedup []float64 `json:"speedup"` // median over rounds of serial / parallel
	Min     []float64 `json:"min"`
	Max     []float64 `json:"max"`
	// Ratio is, per grain, the best OpenMP speedup over this row's: the
	// row's time over the best OpenMP runtime's, each against its own
	// process's serial time, so below 1 is faster, as for a Row (null
	// without an OpenMP runtime).
	Ratio []*float64 `json:"ratio_to_best_openmp"`
}

const workgang = "workgang"

func newResult(p params) *Result {
	r := &Result{Threads: p.threads, Rounds: p.rounds, RoundsPlanned: p.rounds, TargetNS: float64(p.target), DelayNS: p.delayNS,
		LoopIters: loopItersPerThread * p.threads, Grain: Grain{GrainsNS: grainsNS}, Env: openmpEnv(os.Environ()), LoadAvg: loadAvg()}
	for _, c := range constructs {
		r.Constructs = append(r.Constructs, Construct{Name: c.name, Title: c.title})
	}
	return r
}

// loadAvg returns the 1-minute load average, or nil.
func loadAvg() *float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return nil
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nil
	}
	return &v
}

// openmpEnv returns the variables of env that tune an OpenMP runtime.
func openmpEnv(env []string) []string {
	out := []string{} // [] rather than null in JSON
	for _, kv := range env {
		if strings.HasPrefix(kv, "OMP_") || strings.HasPrefix(kv, "GOMP_") || strings.HasPrefix(kv, "KMP_") {
			out = append(out, kv)
		}
	}
	return out
}

func (r *Result) addSkipped(c compiler, err error) {
	r.Runtimes = append(r.Runtimes, Runtime{Name: c.runtime, Command: c.cc, Skipped: err.Error()})
}

func (r *Result) addNative(c compiler, n *nativeRun) {
	r.Runtimes = append(r.Runtimes, Runtime{Name: c.runtime, Command: c.cc, OpenMP: n.version,
		NSPerIter: n.nsPerIter, DelayIters: n.delayIters, DelayNS: n.delayNS})
	for i, con := range constructs {
		r.Constructs[i].Rows = append(r.Constructs[i].Rows, newRow(c.runtime, "", n.overhead[con.name], ""))
	}
	row := GrainRow{Runtime: c.runtime}
	for _, w := range grainsNS {
		sp := make([]float64, len(n.serial[w]))
		for i := range sp {
			sp[i] = n.serial[w][i] / n.parallel[w][i]
		}
		row.add(sp)
	}
	r.Grain.Rows = append(r.Grain.Rows, row)
}

func (r *Result) addWorkgang(g *goRun) {
	r.Runtimes = append(r.Runtimes, Runtime{Name: workgang, Command: "go", NSPerIter: g.nsPerIter,
		DelayIters: g.delayIters, DelayNS: float64(g.delayIters) * g.nsPerIter})
	for i, c := range constructs {
		for j, m := range g.modes[c.name] {
			r.Constructs[i].Rows = append(r.Constructs[i].Rows, newRow(workgang, m.name, g.overhead[c.name][j], m.note))
		}
	}
	for i, name := range g.grainModes {
		row := GrainRow{Runtime: workgang, Mode: name}
		for _, w := range grainsNS {
			row.add(g.speedup[w][i])
		}
		r.Grain.Rows = append(r.Grain.Rows, row)
	}
}

func newRow(runtime, mode string, rounds []float64, note string) Row {
	row := Row{Runtime: runtime, Mode: mode, RoundsNS: rounds, Note: note}
	if len(rounds) > 0 {
		med, lo, hi := summary(rounds)
		row.MedianNS, row.MinNS, row.MaxNS = &med, &lo, &hi
	}
	return row
}

func (g *GrainRow) add(speedups []float64) {
	med, lo, hi := summary(speedups)
	g.Speedup, g.Min, g.Max = append(g.Speedup, med), append(g.Min, lo), append(g.Max, hi)
}

// isOpenMP reports whether a row is an OpenMP runtime's.
func isOpenMP(runtime string) bool { return runtime != workgang }

// finish fills in the ratios to the best OpenMP runtime.
func (r *Result) finish() {
	for ci := range r.Constructs {
		rows := r.Constructs[ci].Rows
		best := math.Inf(1)
		for _, row := range rows {
			if isOpenMP(row.Runtime) && row.MedianNS != nil {
				best = min(best, *row.MedianNS)
			}
		}
		for i := range rows {
			if rows[i].MedianNS != nil && !math.IsInf(best, 1) && best > 0 {
				v := *rows[i].MedianNS / best
				rows[i].Ratio = &v
			}
		}
	}
	for gi := range r.Grain.GrainsNS {
		best := 0.0
		for _, row := range r.Grain.Rows {
			if isOpenMP(row.Runtime) {
				best = max(best, row.Speedup[gi])
			}
		}
		for i := range r.Grain.Rows {
			row := &r.Grain.Rows[i]
			var v *float64
			if best > 0 && row.Speedup[gi] > 0 {
				x := best / row.Speedup[gi]
				v = &x
			}
			row.Ratio = append(row.Ratio, v)
		}
	}
}

// summary returns the median, least and greatest of xs (not empty).
func summary(xs []float64) (med, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// print writes the tables.
func (r *Result) print(out io.Writer) {
	fmt.Fprintf(out, "%d threads, %d rounds (median, min-max), delay %.0f ns per thread, schedule loops of %d iterations\n",
		r.Threads, r.Rounds, r.DelayNS, r.LoopIters)
	if r.Rounds < r.RoundsPlanned {
		fmt.Fprintf(out, "  only %d of %d rounds: the time budget ran out (a loaded machine stretches every measurement)\n", r.Rounds, r.RoundsPlanned)
	}
	if r.withheld != "" {
		fmt.Fprintf(out, "  the machine was loaded: %s.\n  OpenMP teams, whose threads spin while they wait for each other, are hit hardest: every comparison below is withheld\n", r.withheld)
	}
	if len(r.Env) > 0 {
		fmt.Fprintf(out, "  environment: %s\n", strings.Join(r.Env, " "))
	}
	for _, rt := range r.Runtimes {
		if rt.Skipped != "" {
			fmt.Fprintf(out, "  %-9s skipped: %s\n", rt.Name, rt.Skipped)
			continue
		}
		ver := ""
		if rt.OpenMP != 0 {
			ver = fmt.Sprintf(", _OPENMP %d", rt.OpenMP)
		}
		fmt.Fprintf(out, "  %-9s %s%s: kernel %.3f ns/iteration, delay %d iterations = %.1f ns\n",
			rt.Name, rt.Command, ver, rt.NSPerIter, rt.DelayIters, rt.DelayNS)
	}
	fmt.Fprintln(out, "\noverhead per construct, ns (construct minus its serial delay; schedules: per loop, minus one thread's share; lower is better)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	verdict.Heading(tw, false, verdict.Plain("construct"), verdict.Plain("runtime"), verdict.Plain("mode"), verdict.Plain("  median"),
		verdict.Plain("        min-max"), verdict.LowerCol("vs best OpenMP"))
	for _, c := range r.Constructs {
		noise := slices.ContainsFunc(c.Rows, func(row Row) bool { return isOpenMP(row.Runtime) && row.MedianNS != nil && *row.MedianNS < 0 })
		for i, row := range c.Rows {
			title := ""
			if i == 0 {
				title = c.Title
			}
			if row.MedianNS == nil {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%8s\t%15s\tnot expressible: %s\n", title, row.Runtime, row.Mode, "-", "", row.Note)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%8s\t%15s\t%s\n", title, row.Runtime, row.Mode,
				overhead(*row.MedianNS), fmt.Sprintf("%.0f..%.0f", *row.MinNS, *row.MaxNS), r.ratio(row, noise))
		}
	}
	tw.Flush()

	fmt.Fprintln(out, "\ngrain sweep: speedup over serial (median of rounds) for W of work split over the threads (JSON: also min, max and the ratio to the best OpenMP runtime)")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	cols := []verdict.Col{verdict.Plain("runtime"), verdict.Plain("mode")}
	for _, w := range r.Grain.GrainsNS {
		cols = append(cols, verdict.HigherCol(fmtUS(w)))
	}
	verdict.Heading(tw, false, cols...)
	var mk verdict.Marker
	for _, row := range r.Grain.Rows {
		fmt.Fprintf(tw, "%s\t%s", row.Runtime, row.Mode)
		for _, s := range row.Speedup {
			fmt.Fprintf(tw, "\t%8s", mk.Speedup("%.2f", s, r.Threads))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	mk.Footnote(out)
	fmt.Fprintln(out, "(caller-runs is the mode comparable to OpenMP, whose master thread takes part; plain and workers-only have no OpenMP counterpart)")
	if r.Mixed != nil {
		r.Mixed.print(out, r.Threads, r.withheld != "")
	}
	if r.withheld != "" {
		verdict.Withheld(out, r.withheld)
	} else {
		verdict.Print(out, r.verdict())
	}
}

// overhead formats an overhead in ns: one below zero (the construct
// measured faster than its serial delay, which is noise) is not a figure.
func overhead(ns float64) string {
	if ns < 0 {
		return "<0 noise"
	}
	return fmt.Sprintf("%.0f", ns)
}

// ratio formats row's ratio to the best OpenMP runtime: none without one,
// when the comparisons are withheld, or when either overhead is below zero
// (noise: an OpenMP runtime's, for every row of the construct).
func (r *Result) ratio(row Row, noise bool) string {
	switch {
	case row.MedianNS != nil && noise:
		return "- (an OpenMP overhead <0)"
	case row.Ratio == nil:
		return ""
	case r.withheld != "":
		return "withheld"
	case *row.Ratio <= 0:
		return "- (an overhead <0)"
	}
	return fmt.Sprintf("%.2fx", *row.Ratio)
}

// verdict compares workgang's caller-runs rows, the mode comparable to
// OpenMP, with the best OpenMP runtime construct by construct, and judges
// the mixed-process mode.
func (r *Result) verdict() []string {
	lines := []string{r.constructsVerdict()}
	if r.Mixed != nil {
		lines = append(lines, r.Mixed.verdict()...)
	}
	return lines
}

// constructsVerdict compares workgang's caller-runs rows with the best
// OpenMP runtime construct by construct.
func (r *Result) constructsVerdict() string {
	var faster, compared int
	lo, hi := math.Inf(1), 0.0
	for _, c := range r.Constructs {
		best := math.Inf(1)
		for _, row := range c.Rows {
			if isOpenMP(row.Runtime) && row.MedianNS != nil {
				best = min(best, *row.MedianNS)
			}
		}
		for _, row := range c.Rows {
			if row.Runtime != workgang || row.MedianNS == nil || !callerRuns(row.Mode) || math.IsInf(best, 1) || best <= 0 || *row.MedianNS <= 0 {
				continue
			}
			x := *row.MedianNS / best
			compared++
			if x < 1 {
				faster++
			}
			lo, hi = min(lo, x), max(hi, x)
			break // one caller-runs row per construct
		}
	}
	if compared == 0 {
		return "no OpenMP runtime ran (or none had an overhead above 0): workgang was measured alone, nothing compared"
	}
	return fmt.Sprintf("overhead per construct (%s): workgang's caller-runs mode below the best OpenMP runtime's in %d of %d constructs compared, at %.2fx to %.2fx of it",
		verdict.Lower, faster, compared, lo, hi)
}

// callerRuns reports whether a workgang mode lets the caller run copies:
// the mode comparable to OpenMP's master thread.
func callerRuns(mode string) bool { return strings.HasSuffix(mode, modeCaller) }

// fmtUS formats a grain in ns as "W=0.25us".
func fmtUS(ns float64) string {
	return "W=" + strconv.FormatFloat(ns/1e3, 'f', -1, 64) + "us"
}
