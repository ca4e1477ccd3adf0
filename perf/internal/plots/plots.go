// Package plots draws the perf sections' figures for -svg with
// gonum.org/v1/plot: the grain sweep's speedups, the scripted pause's phases,
// the kernel's speedups, the mark's times and the gc pauses, each from its
// section's result and under a caption saying where and how it was
// measured, and with why its section's verdict was withheld if it was.
// Every figure's numbers are also in the text output.
package plots

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/workgang/workgang/perf/internal/forkjoin"
	"github.com/workgang/workgang/perf/internal/plotkit"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/perf/internal/workloads"
)

// figure is a plotkit figure with the drawing helpers of these plots.
type figure struct {
	*plotkit.Figure
}

// newFigure returns a figure with a title, ended by note (a verdict
// withheld, or ""), and axis labels.
func newFigure(title, note, x, y string) *figure {
	f := &figure{plotkit.New(title, x, y)}
	f.AddNote(note)
	return f
}

// save writes the figure as dir/name under caption.
func (f *figure) save(dir, name, caption string) (string, error) {
	path := filepath.Join(dir, name)
	return path, plotkit.Save(path, caption, f.Figure)
}

// styles are the implementations' styles, shared with every plot.
var styles = plotkit.Styles

// series is one implementation's curve; label is its legend entry (the
// implementation's name, possibly with a figure).
type series struct {
	impl, label string
	xys         plotter.XYs
}

// addSeries draws each series as a line with points in its
// implementation's style and names it in the legend.
func (f *figure) addSeries(ss []series) error {
	for i, s := range ss {
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return err
		}
		st := plotkit.StyleOf(s.impl, i)
		l.Color, l.Dashes, l.Width = st.Color, st.Dashes, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = st.Color, st.Glyph, vg.Points(3)
		f.P.Add(l, pts)
		f.Legend.Add(s.label, l, pts)
	}
	return nil
}

// addBound draws a series as a bound: a thin grey dotted line without
// points, named in the legend as what it is.
func (f *figure) addBound(xys plotter.XYs, label string) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width = color.Gray{Y: 110}, vg.Points(2)
	l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
	f.P.Add(l)
	f.Legend.Add(label, l)
	return nil
}

// addOne draws the horizontal line y = 1 (as fast as serial) across [x0, x1].
func (f *figure) addOne(x0, x1 float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: 1}, {X: x1, Y: 1}})
	if err != nil {
		return err
	}
	l.Color, l.Width = color.Black, vg.Points(0.75)
	f.P.Add(l)
	f.Legend.Add("serial (speedup 1)", l)
	return nil
}

// logX gives the plot a logarithmic x axis with a labelled tick at each of
// xs.
func (f *figure) logX(xs []float64) {
	f.P.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, x := range xs {
		ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("%g", x)})
	}
	f.P.X.Tick.Marker = ticks
	f.P.X.Min, f.P.X.Max = xs[0]/1.15, xs[len(xs)-1]*1.15
}

// clipSpeedups clips the speedups of ss and extra at half above what n
// copies can reach on this machine's CPUs (plotkit.ClipSpeedups).
func clipSpeedups(n int, ss []series, extra ...plotter.XYs) plotkit.Clip {
	for _, s := range ss {
		extra = append(extra, s.xys)
	}
	return plotkit.ClipSpeedups(float64(min(n, verdict.CPUs())), extra...)
}

// markBound draws the bound of clip, the speedup n copies (of what)
// cannot exceed on this machine, and the clipped points.
func (f *figure) markBound(clip plotkit.Clip, n int, what string) error {
	return f.MarkSpeedupBound(clip, fmt.Sprintf("%d %s on %d CPUs: above is impossible", n, what, verdict.CPUs()))
}

// Grain draws, per n of the grain sweep, every implementation's speedup
// over serial against W (log scale), the ping-pong as a bound.
func Grain(res any, dir, caption, note string) (string, error) {
	g, ok := res.(*forkjoin.GrainResult)
	if !ok {
		return "", nil
	}
	var names []string
	for _, sw := range g.Sweeps {
		f := newFigure(fmt.Sprintf("grain sweep: n=%d copies share W of CPU work", sw.N), note,
			"W, total work per phase (µs, log scale)", "speedup over serial (serial time / time)")
		var xs []float64
		for _, w := range sw.GrainsNS {
			if w == 1000 || w == 10000 || w == 100000 || w == 1e6 || w == sw.GrainsNS[0] {
				xs = append(xs, w/1000)
			}
		}
		f.logX(xs)
		var ss []series
		var bound plotter.XYs
		for _, gi := range sw.Impls {
			var xys plotter.XYs
			for k, w := range sw.GrainsNS {
				xys = append(xys, plotter.XY{X: w / 1000, Y: gi.Speedup[k]})
			}
			if gi.Impl == runners.NamePingPong {
				bound = xys
				continue
			}
			ss = append(ss, series{gi.Impl, gi.Impl, xys})
		}
		clip := clipSpeedups(sw.N, ss, bound)
		if err := f.addSeries(ss); err != nil {
			return "", err
		}
		if bound != nil {
			if err := f.addBound(bound, "bound: pingpong (cheapest hand-off)"); err != nil {
				return "", err
			}
		}
		if err := f.addOne(sw.GrainsNS[0]/1000, sw.GrainsNS[len(sw.GrainsNS)-1]/1000); err != nil {
			return "", err
		}
		if err := f.markBound(clip, sw.N, "copies"); err != nil {
			return "", err
		}
		name, err := f.save(dir, fmt.Sprintf("grain-n%d.svg", sw.N), caption)
		if err != nil {
			return "", err
		}
		names = append(names, name)
	}
	return strings.Join(names, ", "), nil
}

// Pause draws the median time of every phase of the scripted pause,
// per implementation, as bars down the phases (log scale: the phases range
// from 0.5 to 100 µs of work).
func Pause(res any, dir, caption, note string) (string, error) {
	r, ok := res.(*forkjoin.PauseResult)
	if !ok {
		return "", nil
	}
	f := newFigure("scripted pause: median time per phase (lower is better)", note, "µs per phase (log scale)", "phase (n copies; c: caller-runs, p: plain)")
	var names []string
	for _, ph := range r.Phases {
		mode := "p"
		if ph.CallerRuns {
			mode = "c"
		}
		names = append(names, fmt.Sprintf("%s n=%d %s", ph.Name, ph.N, mode))
	}
	ys := f.Categories(names)
	lo, hi := math.Inf(1), 0.0
	for _, x := range r.Impls {
		for _, ns := range x.PhaseNS {
			if ns > 0 {
				lo, hi = min(lo, ns/1000), max(hi, ns/1000)
			}
		}
	}
	floor := math.Pow(10, math.Floor(math.Log10(lo)))
	bs := plotkit.NewBarSet(len(names), floor)
	for i, x := range r.Impls {
		b := bs.Series(fmt.Sprintf("%s (pause p50 %.0f µs)", x.Impl, x.P50NS/1000), plotkit.StyleOf(x.Impl, i).Color)
		for p, ns := range x.PhaseNS {
			b.Values[ys(p)] = ns / 1000
		}
	}
	bs.AddTo(f.Figure)
	plotkit.LogAxis(&f.P.X, floor, hi*1.3)
	return f.save(dir, "pause-phases.svg", caption)
}

// Kernel draws every implementation's spectral-norm speedup over serial
// against N (log scale).
func Kernel(res any, dir, caption, note string) (string, error) {
	r, ok := res.(*forkjoin.KernelResult)
	if !ok || len(r.Sizes) == 0 {
		return "", nil
	}
	f := newFigure("spectral-norm: 40 phases per solve, one long-lived set", note, "N (log scale)", "speedup over serial")
	var xs []float64
	for _, ks := range r.Sizes {
		xs = append(xs, float64(ks.N))
	}
	f.logX(xs)
	var ss []series
	for i, row := range r.Sizes[0].Rows {
		if row.Impl == runners.NameSerial {
			continue
		}
		s := series{impl: row.Impl, label: row.Impl}
		for _, ks := range r.Sizes {
			s.xys = append(s.xys, plotter.XY{X: float64(ks.N), Y: ks.Rows[i].Speedup})
		}
		ss = append(ss, s)
	}
	copies := 0
	for _, ks := range r.Sizes {
		copies = max(copies, ks.Copies)
	}
	clip := clipSpeedups(copies, ss)
	if err := f.addSeries(ss); err != nil {
		return "", err
	}
	if err := f.addOne(xs[0], xs[len(xs)-1]); err != nil {
		return "", err
	}
	if err := f.markBound(clip, copies, "copies per phase"); err != nil {
		return "", err
	}
	return f.save(dir, "kernel.svg", caption)
}

// bars is one bar series of a grouped bar chart: a value per group.
type bars struct {
	label string
	color color.Color
	vals  plotter.Values
}

// addBars draws grouped bars: group g's bars side by side around x = g, in
// the order of bs, each series in its colour and named in the legend. The
// bars' width fits len(bs) bars into 80% of the space between groups.
func (f *figure) addBars(groups []string, bs []bars) error {
	dataW := plotkit.Width * 0.6 // about the data area's width, legend aside
	w := dataW / vg.Length(len(groups)) * 0.8 / vg.Length(len(bs))
	for k, b := range bs {
		bc, err := plotter.NewBarChart(b.vals, w)
		if err != nil {
			return err
		}
		bc.Color = b.color
		bc.LineStyle.Width = 0
		bc.Offset = (vg.Length(k) - vg.Length(len(bs)-1)/2) * w
		f.P.Add(bc)
		f.Legend.Add(b.label, bc)
	}
	f.P.NominalX(groups...)
	f.P.X.Min, f.P.X.Max = -0.5, float64(len(groups))-0.5
	return nil
}

// Mark draws the mark section's times per graph shape as grouped bars:
// serial, static partition and work-stealing mark.
func Mark(res any, dir, caption, note string) (string, error) {
	r, ok := res.(workloads.MarkResult)
	if !ok || len(r.Rows) == 0 {
		return "", nil
	}
	f := newFigure(fmt.Sprintf("parallel mark: %d objects per graph, %d workers", r.Rows[0].Objects, r.Config.Workers), note, "graph shape", "time per mark (ms)")
	var shapes []string
	bs := []bars{
		{"serial", color.Black, nil},
		{"static partition (errgroup)", styles[runners.NameErrgroup].Color, nil},
		{"workgang work-stealing mark", styles[runners.NameWorkgang].Color, nil},
	}
	top := 0.0
	for _, row := range r.Rows {
		shapes = append(shapes, row.Shape.String())
		for k, d := range []float64{float64(row.Serial), float64(row.Static), float64(row.Stealing)} {
			bs[k].vals = append(bs[k].vals, d/1e6)
			top = max(top, d/1e6)
		}
	}
	if err := f.addBars(shapes, bs); err != nil {
		return "", err
	}
	f.LinearY(top, 0)
	return f.save(dir, "mark.svg", caption)
}

// GC draws, per heap of the gc section, every implementation's pause
// p50 and p99 as grouped bars, in µs or, for pauses of milliseconds, in ms.
func GC(res any, dir, caption, note string) (string, error) {
	r, ok := res.(workloads.GCResult)
	if !ok || len(r.Heaps) == 0 {
		return "", nil
	}
	var names []string
	for _, hp := range r.Heaps {
		top := 0.0
		for _, x := range hp.Rows {
			top = max(top, x.P99NS)
		}
		unit, div := "µs", 1e3
		if top >= 10e6 {
			unit, div = "ms", 1e6
		}
		f := newFigure(fmt.Sprintf("gc, %s heap: pause per collection (%d slots, %d cycles, %d workers)", hp.Name, hp.Slots, hp.Cycles, r.Workers), note,
			"implementation", fmt.Sprintf("pause (%s)", unit))
		var impls []string
		p50 := bars{"p50", color.Gray{Y: 70}, nil}
		p99 := bars{"p99", color.Gray{Y: 170}, nil}
		for _, x := range hp.Rows {
			impls = append(impls, x.Impl)
			p50.vals = append(p50.vals, x.P50NS/div)
			p99.vals = append(p99.vals, x.P99NS/div)
		}
		if err := f.addBars(impls, []bars{p50, p99}); err != nil {
			return "", err
		}
		f.LinearY(top/div, 0)
		name, err := f.save(dir, fmt.Sprintf("gc-%s.svg", hp.Name), caption)
		if err != nil {
			return "", err
		}
		names = append(names, name)
	}
	return strings.Join(names, ", "), nil
}
