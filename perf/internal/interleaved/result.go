package interleaved

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/workgang/workgang/perf/internal/forkjoin"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
)

// The drivers, as OpResult.Worse names them.
const (
	DriverAlone       = "alone"
	DriverInterleaved = "interleaved"
)

// Result is the section's result (its JSON).
type Result struct {
	Size      int     `json:"size"`        // full parallelism: the set's workers, the pools' goroutines, n of the grain sweep
	NSPerUnit float64 `json:"ns_per_unit"` // calibrated cost of one step of work
	sizes
	Impls []string   `json:"impls"` // the implementations, in column order
	Ops   []OpResult `json:"ops"`
}

// ImplResult is one implementation's figure for one op under one driver,
// with the heap allocations per run of its calibration.
type ImplResult struct {
	Impl string `json:"impl"`
	Figure
	AllocsPerRun float64 `json:"allocs_per_run"`
}

// OpResult is one operation: workgang under both drivers, every other
// implementation interleaved, and the comparisons.
type OpResult struct {
	Op     string  `json:"op"`
	Kind   string  `json:"kind"`
	N      int     `json:"n"`
	WorkNS float64 `json:"work_ns"` // per copy; the pause: the script's total
	Mode   string  `json:"mode"`
	// Alone is workgang's batches back to back; Interleaved is every
	// implementation's batches in the rounds, workgang first.
	Alone       ImplResult   `json:"alone"`
	Interleaved []ImplResult `json:"interleaved"`
	// Worse names the driver under which workgang's median is the larger
	// (the figure docs report), WorseNS is that median.
	Worse   string  `json:"worse"`
	WorseNS float64 `json:"worse_ns"`
	// Disagree: workgang's alone and interleaved ranges do not overlap.
	Disagree bool `json:"disagree"`
	// BestPeer is the peer with the lowest interleaved median; XBestPeer
	// and XWaitGroup are WorseNS over its and go+WaitGroup's medians
	// (lower is better).
	BestPeer   string  `json:"best_peer"`
	XBestPeer  float64 `json:"x_best_peer"`
	XWaitGroup float64 `json:"x_waitgroup"`
	// XSerial is serial's median over WorseNS, a speedup (higher is
	// better); null where serial is not measured.
	XSerial *float64 `json:"x_serial"`
}

// impl returns the interleaved figure of the implementation called name,
// or nil.
func (r *OpResult) impl(name string) *ImplResult {
	for i := range r.Interleaved {
		if r.Interleaved[i].Impl == name {
			return &r.Interleaved[i]
		}
	}
	return nil
}

// worse returns the driver whose figure is the larger (interleaved on a
// tie: what users run) and its median.
func worse(alone, interleaved Figure) (string, float64) {
	if alone.MedianNS > interleaved.MedianNS {
		return DriverAlone, alone.MedianNS
	}
	return DriverInterleaved, interleaved.MedianNS
}

// judge fills in the comparisons from the figures.
func (r *OpResult) judge() {
	w := r.impl(runners.NameWorkgang)
	if w == nil {
		return
	}
	r.Worse, r.WorseNS = worse(r.Alone.Figure, w.Figure)
	r.Disagree = !r.Alone.overlaps(w.Figure)
	var best *ImplResult
	for _, im := range impls {
		if x := r.impl(im.name); im.kind == kindPeer && x != nil && (best == nil || x.MedianNS < best.MedianNS) {
			best = x
		}
	}
	if best != nil {
		r.BestPeer, r.XBestPeer = best.Impl, measure.Ratio(r.WorseNS, best.MedianNS)
	}
	if g := r.impl(runners.NameWaitGroup); g != nil {
		r.XWaitGroup = measure.Ratio(r.WorseNS, g.MedianNS)
	}
	if s := r.impl(runners.NameSerial); s != nil {
		x := measure.Ratio(s.MedianNS, r.WorseNS)
		r.XSerial = &x
	}
}

// fmtUS formats ns as microseconds with three significant digits or more.
func fmtUS(ns float64) string {
	us := ns / 1000
	switch {
	case us < 1:
		return fmt.Sprintf("%.3f", us)
	case us < 10:
		return fmt.Sprintf("%.2f", us)
	case us < 100:
		return fmt.Sprintf("%.1f", us)
	}
	return fmt.Sprintf("%.0f", us)
}

// fmtFigure formats a figure as "median [min-max]" in us.
func fmtFigure(f Figure) string {
	return fmt.Sprintf("%s [%s-%s]", fmtUS(f.MedianNS), fmtUS(f.MinNS), fmtUS(f.MaxNS))
}

// WorseMark follows the worse of workgang's two figures in the table.
const WorseMark = "*"

// DifferMark starts the cell of an op whose two workgang figures disagree.
const DifferMark = "DIFFER"

// printIntro prints what the section runs and the implementations.
func printIntro(w io.Writer, res *Result) {
	fmt.Fprintf(w, "one long-lived workgang set of %d workers (all started before timing) and the peers, each set up once for the whole section;\n", res.Size)
	fmt.Fprintf(w, "work: xorshift steps, %.3f ns each; grain: W per copy, n=%d; pause: forkjoin's script of %d phases, %s of serial work on the caller before each pause (not timed)\n",
		res.NSPerUnit, res.Size, len(forkjoin.PauseScript(res.Size)), measure.FmtNS(forkjoin.PauseGapNS))
	fmt.Fprintf(w, "alone: %d batches of ~%s of workgang runs back to back, nothing else between (as go test -bench runs b.N);\n",
		res.Rounds, measure.FmtNS(res.WorkgangBatchNS))
	fmt.Fprintf(w, "interleaved: %d rounds, each a ~%s batch of workgang runs followed by a ~%s batch of the same op on every peer (and serial), in an order rotating per round\n",
		res.Rounds, measure.FmtNS(res.WorkgangBatchNS), measure.FmtNS(res.OtherBatchNS))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, im := range impls {
		fmt.Fprintf(tw, "  %s\t%s\n", im.name, strings.ReplaceAll(im.desc, "{size}", fmt.Sprint(res.Size)))
	}
	tw.Flush()
}

// printResult prints the two tables: workgang under both drivers with the
// ratios, then every other implementation's interleaved figure.
func printResult(w io.Writer, res *Result) {
	fmt.Fprintf(w, "\nworkgang, us per run: median over batches [min-max]\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	verdict.Heading(tw, true, verdict.Plain("op"), verdict.Plain("runs"), verdict.Plain("allocs/run"), verdict.Plain("alone us"),
		verdict.Plain("interleaved us"), verdict.Plain("alone vs interleaved"), verdict.Plain("best peer"),
		verdict.LowerCol("x best peer"), verdict.LowerCol("x "+runners.NameWaitGroup), verdict.HigherCol("x serial"))
	var mk verdict.Marker
	for _, r := range res.Ops {
		wg := r.impl(runners.NameWorkgang)
		if wg == nil {
			continue
		}
		alone, inter := fmtFigure(r.Alone.Figure), fmtFigure(wg.Figure)
		if r.Worse == DriverAlone {
			alone += WorseMark
		} else {
			inter += WorseMark
		}
		agree := "overlap"
		if r.Disagree {
			agree = DifferMark + ": interleaved " + verdict.Times(wg.MedianNS, r.Alone.MedianNS)
		}
		serial := "-"
		if r.XSerial != nil {
			serial = mk.Speedup("%.2f", *r.XSerial, r.N)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t\n", r.Op, r.Alone.Runs, r.Alone.AllocsPerRun, alone, inter, agree,
			r.BestPeer, r.XBestPeer, r.XWaitGroup, serial)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s: the worse of workgang's two figures (the larger median), the one docs report; the x columns divide it by the others' interleaved medians\n", WorseMark)
	fmt.Fprintf(w, "%s: the two ranges do not overlap: the driver moved workgang's figure by more than its spread\n", DifferMark)
	mk.Footnote(w)

	fmt.Fprintf(w, "\ninterleaved, us per run: median over rounds [min-max]\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cols := []verdict.Col{verdict.Plain("op")}
	for _, im := range impls[1:] {
		cols = append(cols, verdict.Plain(im.name))
	}
	verdict.Heading(tw, true, cols...)
	for _, r := range res.Ops {
		fmt.Fprintf(tw, "%s\t", r.Op)
		for _, im := range impls[1:] {
			cell := "-"
			if x := r.impl(im.name); x != nil {
				cell = fmtFigure(x.Figure)
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// sectionVerdict is the section's verdict: per op, workgang's worse figure
// against the best peer, go+WaitGroup and serial; then the ops whose two
// workgang figures disagree.
func sectionVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(*Result)
	if r == nil {
		return nil
	}
	var lines, differ []string
	for _, o := range r.Ops {
		if o.BestPeer == "" {
			lines = append(lines, o.Op+": not measured")
			continue
		}
		best, wg := o.impl(o.BestPeer), o.impl(runners.NameWaitGroup)
		line := fmt.Sprintf("%s: workgang %s us (%s, the worse) against the best peer %s %s us: %s",
			o.Op, fmtUS(o.WorseNS), o.Worse, o.BestPeer, fmtUS(best.MedianNS), verdict.Times(o.WorseNS, best.MedianNS))
		if o.BestPeer != runners.NameWaitGroup {
			line += fmt.Sprintf("; against %s %s us: %s", runners.NameWaitGroup, fmtUS(wg.MedianNS), verdict.Times(o.WorseNS, wg.MedianNS))
		}
		if o.XSerial != nil {
			line += fmt.Sprintf("; speedup over serial %s", verdict.Speedup(*o.XSerial, o.N))
		}
		lines = append(lines, line)
		if o.Disagree {
			w := o.impl(runners.NameWorkgang)
			differ = append(differ, fmt.Sprintf("%s (interleaved %s)", o.Op, verdict.Times(w.MedianNS, o.Alone.MedianNS)))
		}
	}
	if len(differ) > 0 {
		lines = append(lines, fmt.Sprintf("alone and interleaved disagree beyond their spread (ranges do not overlap) on %d of %d ops: %s",
			len(differ), len(r.Ops), strings.Join(differ, ", ")))
	} else {
		lines = append(lines, fmt.Sprintf("alone and interleaved agree within their spread (ranges overlap) on all %d ops", len(r.Ops)))
	}
	return append(lines, "(us per run, median over batches; workgang's figure is the worse of its two drivers, "+verdict.Lower+")")
}
