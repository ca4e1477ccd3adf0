package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot size. The legend is drawn to the right of the data area, never over
// it; the data area gets what the legend leaves.
const (
	plotWidth  = 24 * vg.Centimeter
	plotHeight = 12 * vg.Centimeter
)

// fallbackFontSlack is how much wider than measured the legend's column is
// kept, for renderers that draw the text in a wider font.
const fallbackFontSlack = 1.2

// plotFunc writes the figures of one section of a finished run to dir; it
// returns the files' names, or "" when the run has nothing to plot for it.
type plotFunc func(results map[string]any, dir string) (string, error)

// plots are the figures -svg writes, each from one section's result (absent
// sections are skipped). Every figure's numbers are also in the text output.
// A section's plot is one more entry.
var plots = []plotFunc{plotGrain, plotPause, plotKernel, plotMark, plotGC, plotOpenMP}

// writePlots writes every figure the results allow to dir (created if
// missing) and lists the files on w.
func writePlots(w io.Writer, dir string, results map[string]any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range plots {
		name, err := f(results, dir)
		if err != nil {
			return err
		}
		if name != "" {
			fmt.Fprintf(w, "wrote %s\n", name)
		}
	}
	return nil
}

// figure is a plot with its legend kept apart, to be drawn beside the data
// area by save.
type figure struct {
	p      *plot.Plot
	legend plot.Legend
	height vg.Length
}

// newFigure returns a figure with a title and axis labels.
func newFigure(title, x, y string) *figure {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(10)
	l.Padding = vg.Points(3)
	return &figure{p: p, legend: l, height: plotHeight}
}

// save writes the figure as dir/name: the plot on the left, the legend in a
// column to its right, its top level with the top of the data area.
func (f *figure) save(dir, name string) (string, error) {
	c := vgsvg.New(plotWidth, f.height)
	margin := vg.Points(6) // the renderer's font may be taller or wider than measured
	dc := draw.Crop(draw.New(c), margin, -margin, margin, -margin)
	gap := vg.Points(12)
	// The layout is measured with gonum's Liberation fonts (metric-compatible
	// with Times New Roman and Arial, so most renderers draw them the same
	// width); a renderer with neither falls back to a font such as DejaVu
	// Serif, about a fifth wider, so the legend's column leaves that much
	// room.
	lw := f.legend.Rectangle(dc).Size().X*fallbackFontSlack + gap
	area := draw.Crop(dc, 0, -lw, 0, 0)
	f.p.Draw(area)
	data := f.p.DataCanvas(area)
	f.legend.Draw(draw.Crop(dc, dc.Size().X-lw+gap/2, 0, 0, data.Max.Y-dc.Max.Y))
	path := filepath.Join(dir, name)
	out, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := c.WriteTo(out); err != nil {
		out.Close()
		return "", err
	}
	return path, out.Close()
}

// seriesStyle is how one implementation is drawn: the same in every figure.
type seriesStyle struct {
	color  color.Color
	dashes []vg.Length
	glyph  draw.GlyphDrawer
}

// rgb is a colour from its hex digits.
func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// Line patterns: workgang's series are solid (dash-dotted on the long-lived
// set of the empty-task sections), the peers' dashed.
var (
	solid   []vg.Length
	dashDot = []vg.Length{vg.Points(7), vg.Points(2), vg.Points(2), vg.Points(2)}
	dashed  = []vg.Length{vg.Points(5), vg.Points(3)}
	dotted  = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
)

// styles maps implementation names to their styles: workgang's in blues and
// greens (indigo and olive on the long-lived set), the peers in warm
// colours, serial in black (the Okabe-Ito palette and two of Paul Tol's,
// which stay distinguishable with the common colour-vision deficiencies).
var styles = map[string]seriesStyle{
	nameWorkgang:    {rgb(0x0072B2), solid, draw.CircleGlyph{}},
	nameCaller:      {rgb(0x009E73), solid, draw.TriangleGlyph{}},
	nameForRange:    {rgb(0x56B4E9), solid, draw.SquareGlyph{}},
	nameTeam:        {rgb(0x117733), solid, draw.PyramidGlyph{}},
	nameOneWorkgang: {rgb(0x332288), dashDot, draw.RingGlyph{}},
	nameOneCaller:   {rgb(0x999933), dashDot, draw.PyramidGlyph{}},
	nameWaitGroup:   {rgb(0xE69F00), dashed, draw.CrossGlyph{}},
	nameErrgroup:    {rgb(0xD55E00), dashed, draw.PlusGlyph{}},
	nameChanPool:    {rgb(0xCC79A7), dashed, draw.BoxGlyph{}},
	nameSerial:      {color.Black, dotted, draw.CircleGlyph{}},
}

// styleOf returns name's style; an implementation without one (a new
// section's) gets one of plotutil's.
func styleOf(name string, i int) seriesStyle {
	if s, ok := styles[name]; ok {
		return s
	}
	return seriesStyle{plotutil.Color(i), plotutil.Dashes(i), plotutil.Shape(i)}
}

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
		st := styleOf(s.impl, i)
		l.Color, l.Dashes, l.Width = st.color, st.dashes, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = st.color, st.glyph, vg.Points(3)
		f.p.Add(l, pts)
		f.legend.Add(s.label, l, pts)
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
	f.p.Add(l)
	f.legend.Add(label, l)
	return nil
}

// addOne draws the horizontal line y = 1 (as fast as serial) across [x0, x1].
func (f *figure) addOne(x0, x1 float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: 1}, {X: x1, Y: 1}})
	if err != nil {
		return err
	}
	l.Color, l.Width = color.Black, vg.Points(0.75)
	f.p.Add(l)
	f.legend.Add("serial (speedup 1)", l)
	return nil
}

// logX gives the plot a logarithmic x axis with a labelled tick at each of
// xs.
func (f *figure) logX(xs []float64) {
	f.p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, x := range xs {
		ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("%g", x)})
	}
	f.p.X.Tick.Marker = ticks
	f.p.X.Min, f.p.X.Max = xs[0]/1.15, xs[len(xs)-1]*1.15
}

// linearY gives the plot a linear y axis from 0 to a little above the
// largest y of ss and of floor (at least floor, so that a reference line at
// floor shows), with ticks at a step that gives about six labels.
func (f *figure) linearY(top, floor float64) {
	top = max(top, floor) * 1.08
	if top <= 0 || math.IsNaN(top) || math.IsInf(top, 0) {
		top = 1 // nothing measured: any axis will do
	}
	step := niceStep(top / 6)
	f.p.Y.Min, f.p.Y.Max = 0, math.Ceil(top/step)*step
	var ticks plot.ConstantTicks
	for k := 0.0; k*step <= f.p.Y.Max+step/2; k++ {
		ticks = append(ticks, plot.Tick{Value: k * step, Label: strconv.FormatFloat(k*step, 'f', -1, 32)})
	}
	f.p.Y.Tick.Marker = ticks
}

// logY gives the plot a logarithmic y axis over [lo, hi], with ticks at 1,
// 2 and 5 times the powers of ten in it.
func (f *figure) logY(lo, hi float64) {
	f.p.Y.Scale = plot.LogScale{}
	f.p.Y.Min, f.p.Y.Max = lo, hi
	var ticks plot.ConstantTicks
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if y := m * math.Pow(10, e); y >= lo && y <= hi {
				ticks = append(ticks, plot.Tick{Value: y, Label: strconv.FormatFloat(y, 'f', -1, 32)})
			}
		}
	}
	f.p.Y.Tick.Marker = ticks
}

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten that
// is at least x.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// maxY returns the largest y of ss.
func maxY(ss []series) float64 {
	top := 0.0
	for _, s := range ss {
		for _, xy := range s.xys {
			top = max(top, xy.Y)
		}
	}
	return top
}

// plotGrain draws, per n of the grain sweep, every implementation's speedup
// over serial against W (log scale), the ping-pong as a bound.
func plotGrain(results map[string]any, dir string) (string, error) {
	g, ok := results["grain"].(*grainResult)
	if !ok {
		return "", nil
	}
	var names []string
	for _, sw := range g.Sweeps {
		f := newFigure(fmt.Sprintf("grain sweep: n=%d copies share W of CPU work", sw.N),
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
			if gi.Impl == namePingPong {
				bound = xys
				continue
			}
			ss = append(ss, series{gi.Impl, gi.Impl, xys})
		}
		if err := f.addSeries(ss); err != nil {
			return "", err
		}
		top := maxY(ss)
		if bound != nil {
			if err := f.addBound(bound, "bound: pingpong (cheapest hand-off)"); err != nil {
				return "", err
			}
			top = max(top, maxY([]series{{xys: bound}}))
		}
		if err := f.addOne(sw.GrainsNS[0]/1000, sw.GrainsNS[len(sw.GrainsNS)-1]/1000); err != nil {
			return "", err
		}
		f.linearY(top, 1)
		name, err := f.save(dir, fmt.Sprintf("grain-n%d.svg", sw.N))
		if err != nil {
			return "", err
		}
		names = append(names, name)
	}
	return strings.Join(names, ", "), nil
}

// plotPause draws the median time of every phase of the scripted pause, per
// implementation (log scale: the phases range from 0.5 to 100 µs of work).
func plotPause(results map[string]any, dir string) (string, error) {
	r, ok := results["pause"].(*pauseResult)
	if !ok {
		return "", nil
	}
	f := newFigure("scripted pause: median time per phase", "phase (n copies; c: caller-runs, p: plain)", "µs per phase (log)")
	f.height = 15 * vg.Centimeter // room for the slanted phase names
	var ticks plot.ConstantTicks
	for i, ph := range r.Phases {
		mode := "p"
		if ph.CallerRuns {
			mode = "c"
		}
		ticks = append(ticks, plot.Tick{Value: float64(i + 1), Label: fmt.Sprintf("%s n=%d %s", ph.Name, ph.N, mode)})
	}
	f.p.X.Tick.Marker = ticks
	f.p.X.Tick.Label.Rotation = math.Pi / 4
	f.p.X.Tick.Label.XAlign = text.XRight  // the label ends at its tick
	f.p.X.Tick.Label.YAlign = text.YBottom // the slanted name hangs below its tick, clear of the axis
	f.p.X.Min, f.p.X.Max = 0.5, float64(len(r.Phases))+0.5
	var ss []series
	lo, hi := math.Inf(1), 0.0
	for _, x := range r.Impls {
		s := series{impl: x.Impl, label: fmt.Sprintf("%s (pause p50 %.0f µs)", x.Impl, x.P50NS/1000)}
		for i, ns := range x.PhaseNS {
			us := max(ns, 1) / 1000
			s.xys = append(s.xys, plotter.XY{X: float64(i + 1), Y: us})
			lo, hi = min(lo, us), max(hi, us)
		}
		ss = append(ss, s)
	}
	f.logY(lo/1.3, hi*1.3)
	if err := f.addSeries(ss); err != nil {
		return "", err
	}
	return f.save(dir, "pause-phases.svg")
}

// plotKernel draws every implementation's spectral-norm speedup over serial
// against N (log scale).
func plotKernel(results map[string]any, dir string) (string, error) {
	r, ok := results["kernel"].(*kernelResult)
	if !ok || len(r.Sizes) == 0 {
		return "", nil
	}
	f := newFigure("spectral-norm: 40 phases per solve, one long-lived set", "N (log scale)", "speedup over serial")
	var xs []float64
	for _, ks := range r.Sizes {
		xs = append(xs, float64(ks.N))
	}
	f.logX(xs)
	var ss []series
	for i, im := range kernelImpls {
		if im.name == nameSerial {
			continue
		}
		s := series{impl: im.name, label: im.name}
		for _, ks := range r.Sizes {
			s.xys = append(s.xys, plotter.XY{X: float64(ks.N), Y: ks.Rows[i].Speedup})
		}
		ss = append(ss, s)
	}
	if err := f.addSeries(ss); err != nil {
		return "", err
	}
	if err := f.addOne(xs[0], xs[len(xs)-1]); err != nil {
		return "", err
	}
	f.linearY(maxY(ss), 1)
	return f.save(dir, "kernel.svg")
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
	dataW := plotWidth * 0.6 // about the data area's width, legend aside
	w := dataW / vg.Length(len(groups)) * 0.8 / vg.Length(len(bs))
	for k, b := range bs {
		bc, err := plotter.NewBarChart(b.vals, w)
		if err != nil {
			return err
		}
		bc.Color = b.color
		bc.LineStyle.Width = 0
		bc.Offset = (vg.Length(k) - vg.Length(len(bs)-1)/2) * w
		f.p.Add(bc)
		f.legend.Add(b.label, bc)
	}
	f.p.NominalX(groups...)
	f.p.X.Min, f.p.X.Max = -0.5, float64(len(groups))-0.5
	return nil
}

// plotMark draws the mark section's times per graph shape as grouped bars:
// serial, static partition and work-stealing mark.
func plotMark(results map[string]any, dir string) (string, error) {
	r, ok := results["mark"].(markResult)
	if !ok || len(r.Rows) == 0 {
		return "", nil
	}
	f := newFigure(fmt.Sprintf("parallel mark: %d objects per graph, %d workers", r.Rows[0].Objects, r.Config.Workers), "graph shape", "time per mark (ms)")
	var shapes []string
	bs := []bars{
		{"serial", color.Black, nil},
		{"static partition (errgroup)", styles[nameErrgroup].color, nil},
		{"workgang work-stealing mark", styles[nameWorkgang].color, nil},
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
	f.linearY(top, 0)
	return f.save(dir, "mark.svg")
}

// plotGC draws, per heap of the gc section, every implementation's pause
// p50 and p99 as grouped bars, in µs or, for pauses of milliseconds, in ms.
func plotGC(results map[string]any, dir string) (string, error) {
	r, ok := results["gc"].(gcResult)
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
		f := newFigure(fmt.Sprintf("gc, %s heap: pause per collection (%d slots, %d cycles, %d workers)", hp.Name, hp.Slots, hp.Cycles, r.Workers),
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
		f.linearY(top/div, 0)
		name, err := f.save(dir, fmt.Sprintf("gc-%s.svg", hp.Name))
		if err != nil {
			return "", err
		}
		names = append(names, name)
	}
	return strings.Join(names, ", "), nil
}
