package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot size: wide enough for a legend of seven implementations beside the
// curves.
const (
	plotWidth  = 18 * vg.Centimeter
	plotHeight = 11 * vg.Centimeter
)

// plotFunc writes one figure of a finished run to dir; it returns the file's
// name, or "" when the run has nothing to plot for it.
type plotFunc func(results map[string]any, dir string) (string, error)

// plots are the figures -svg writes, each from one section's result (absent
// sections are skipped). Every figure's numbers are also in the text output.
var plots = []plotFunc{plotGrain, plotPause, plotKernel, plotMark, plotOpenMP}

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

// newPlot returns a plot with a title, axis labels and the legend on the
// upper left.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6) // YOffs: see alignLegend
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

// logX gives p a logarithmic x axis with a labelled tick at each of xs.
func logX(p *plot.Plot, xs []float64) {
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, x := range xs {
		ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("%g", x)})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = xs[0]/1.15, xs[len(xs)-1]*1.15
}

// legendRoom is the share of a linear y axis kept above the data for the
// legend (top left, thumbnails first: a renderer whose font is wider than
// the one the plot measured with lets a name run to the right, over empty
// space, not over its thumbnail).
const legendRoom = 0.4

// speedupY gives p a linear y axis from 0, labelled every 0.25, with the
// largest speedup in ss (at least 2) below the legend's room.
func speedupY(p *plot.Plot, ss []series) {
	top := 2.0
	for _, s := range ss {
		for _, xy := range s.xys {
			top = max(top, xy.Y*1.05)
		}
	}
	top /= 1 - legendRoom
	p.Y.Min, p.Y.Max = 0, top
	var ticks plot.ConstantTicks
	for y := 0.0; y <= top; y += 0.25 {
		label := ""
		if math.Mod(y, 0.5) == 0 {
			label = fmt.Sprintf("%g", y)
		}
		ticks = append(ticks, plot.Tick{Value: y, Label: label})
	}
	p.Y.Tick.Marker = ticks
}

// series is one named curve.
type series struct {
	name string
	xys  plotter.XYs
}

// addSeries adds curves with distinct colours, dashes and markers, each
// named in the legend.
func addSeries(p *plot.Plot, ss []series) error {
	var vs []any
	for _, s := range ss {
		vs = append(vs, s.name, s.xys)
	}
	return plotutil.AddLinePoints(p, vs...)
}

// addOne draws the horizontal line y = 1 (as fast as serial) across [x0, x1].
func addOne(p *plot.Plot, x0, x1 float64, name string) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: 1}, {X: x1, Y: 1}})
	if err != nil {
		return err
	}
	l.Color = color.Gray{Y: 96}
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// save writes p as dir/name, with its legend aligned to the data area.
func save(p *plot.Plot, dir, name string) (string, error) {
	alignLegend(p)
	path := filepath.Join(dir, name)
	return path, p.Save(plotWidth, plotHeight, path)
}

// alignLegend moves p's legend down to the top of the data area. The plot
// places the legend from the top of the area below the title, but pads the
// data area further (for rotated tick labels, for instance), which would
// leave the legend above the data area, over the axis.
func alignLegend(p *plot.Plot) {
	c := draw.New(vgsvg.New(plotWidth, plotHeight))
	top := c.Max.Y
	if p.Title.Text != "" {
		top -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	p.Legend.YOffs = -(top - p.DataCanvas(c).Max.Y) - vg.Points(4)
}

// plotGrain draws, per n of the grain sweep, every implementation's speedup
// over serial against W (log scale).
func plotGrain(results map[string]any, dir string) (string, error) {
	g, ok := results["grain"].(*grainResult)
	if !ok {
		return "", nil
	}
	var names string
	for _, sw := range g.Sweeps {
		p := newPlot(fmt.Sprintf("grain sweep: n=%d copies share W of CPU work", sw.N),
			"W, total work per phase (us, log scale)", "speedup over serial (serial time / time)")
		var xs []float64
		for _, w := range sw.GrainsNS {
			if w == 1000 || w == 10000 || w == 100000 || w == 1e6 || w == sw.GrainsNS[0] {
				xs = append(xs, w/1000)
			}
		}
		logX(p, xs)
		var ss []series
		for _, gi := range sw.Impls {
			s := series{name: gi.Impl}
			for k, w := range sw.GrainsNS {
				s.xys = append(s.xys, plotter.XY{X: w / 1000, Y: gi.Speedup[k]})
			}
			ss = append(ss, s)
		}
		if err := addSeries(p, ss); err != nil {
			return "", err
		}
		if err := addOne(p, sw.GrainsNS[0]/1000, sw.GrainsNS[len(sw.GrainsNS)-1]/1000, "serial = 1"); err != nil {
			return "", err
		}
		speedupY(p, ss)
		name, err := save(p, dir, fmt.Sprintf("grain-n%d.svg", sw.N))
		if err != nil {
			return "", err
		}
		names = joinNames(names, name)
	}
	return names, nil
}

// plotPause draws the median time of every phase of the scripted pause, per
// implementation (log scale: the phases range from 0.5 to 100 us of work).
func plotPause(results map[string]any, dir string) (string, error) {
	r, ok := results["pause"].(*pauseResult)
	if !ok {
		return "", nil
	}
	p := newPlot("scripted pause: median time per phase", "phase (n copies, caller-runs c or plain p)", "time per phase (us, log scale)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var ticks plot.ConstantTicks
	for i, ph := range r.Phases {
		mode := "p"
		if ph.CallerRuns {
			mode = "c"
		}
		ticks = append(ticks, plot.Tick{Value: float64(i + 1), Label: fmt.Sprintf("%s n=%d %s", ph.Name, ph.N, mode)})
	}
	p.X.Tick.Marker = ticks
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = text.XRight // the label ends at its tick
	p.X.Tick.Label.YAlign = text.YCenter
	p.X.Min, p.X.Max = 0.5, float64(len(r.Phases))+0.5
	var ss []series
	top := 1.0
	for _, x := range r.Impls {
		s := series{name: fmt.Sprintf("%s (pause p50 %.0f us)", x.Impl, x.P50NS/1000)}
		for i, ns := range x.PhaseNS {
			s.xys = append(s.xys, plotter.XY{X: float64(i + 1), Y: max(ns, 1) / 1000})
			top = max(top, ns/1000)
		}
		ss = append(ss, s)
	}
	// The decade above the slowest phase holds the legend.
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(top))+1)
	if err := addSeries(p, ss); err != nil {
		return "", err
	}
	return save(p, dir, "pause-phases.svg")
}

// plotKernel draws every implementation's spectral-norm speedup over serial
// against N (log scale).
func plotKernel(results map[string]any, dir string) (string, error) {
	r, ok := results["kernel"].(*kernelResult)
	if !ok || len(r.Sizes) == 0 {
		return "", nil
	}
	p := newPlot("spectral-norm: 40 phases per solve, one long-lived set", "N (log scale)", "speedup over serial")
	var xs []float64
	for _, ks := range r.Sizes {
		xs = append(xs, float64(ks.N))
	}
	logX(p, xs)
	var ss []series
	for i, im := range kernelImpls {
		if im.name == nameSerial {
			continue
		}
		s := series{name: im.name}
		for _, ks := range r.Sizes {
			s.xys = append(s.xys, plotter.XY{X: float64(ks.N), Y: ks.Rows[i].Speedup})
		}
		ss = append(ss, s)
	}
	if err := addSeries(p, ss); err != nil {
		return "", err
	}
	if err := addOne(p, xs[0], xs[len(xs)-1], "serial = 1"); err != nil {
		return "", err
	}
	speedupY(p, ss)
	return save(p, dir, "kernel.svg")
}

// plotMark draws the mark section's times per graph shape as grouped bars:
// serial, static partition and work-stealing mark.
func plotMark(results map[string]any, dir string) (string, error) {
	r, ok := results["mark"].(markResult)
	if !ok || len(r.Rows) == 0 {
		return "", nil
	}
	p := newPlot(fmt.Sprintf("parallel mark: %d objects per graph", r.Rows[0].Objects), "graph shape", "time per mark (ms)")
	var names []string
	bars := [3]plotter.Values{}
	top := 0.0
	for _, row := range r.Rows {
		names = append(names, row.Shape.String())
		for k, d := range []float64{float64(row.Serial), float64(row.Static), float64(row.Stealing)} {
			bars[k] = append(bars[k], d/1e6)
			top = max(top, d/1e6)
		}
	}
	p.Y.Min, p.Y.Max = 0, top/(1-legendRoom)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	w := vg.Points(24)
	for k, label := range []string{"serial", "static partition", "work stealing"} {
		b, err := plotter.NewBarChart(bars[k], w)
		if err != nil {
			return "", err
		}
		b.Color = plotutil.Color(k)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(k-1) * w
		p.Add(b)
		p.Legend.Add(label, b)
	}
	p.NominalX(names...)
	return save(p, dir, "mark.svg")
}

// joinNames joins file names for writePlots' listing.
func joinNames(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
