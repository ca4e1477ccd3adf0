package openmp

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot size: one panel; the file stacks two.
const (
	panelWidth  = 20 * vg.Centimeter
	panelHeight = 12 * vg.Centimeter
)

// plotFile is the figure's file name in the -svg directory.
const plotFile = "openmp.svg"

// Plot writes r's figure into dir as openmp.svg and returns its path: the
// grain sweep's speedups against W (log scale) above the constructs'
// overheads (log scale), every runtime and mode a series.
func Plot(r *Result, dir string) (string, error) {
	grain, err := plotGrain(r)
	if err != nil {
		return "", err
	}
	over, err := plotOverheads(r)
	if err != nil {
		return "", err
	}
	c := vgsvg.New(panelWidth, 2*panelHeight)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(10), PadTop: vg.Points(4), PadRight: vg.Points(6)}
	grain.Draw(tiles.At(dc, 0, 0))
	over.Draw(tiles.At(dc, 0, 1))
	path := filepath.Join(dir, plotFile)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// rowName names a row in a legend.
func rowName(runtime, mode string) string {
	if mode == "" {
		return runtime
	}
	return runtime + " " + mode
}

func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	return p
}

// plotGrain draws every row's speedup against W.
func plotGrain(r *Result) (*plot.Plot, error) {
	p := newPanel(fmt.Sprintf("grain sweep: speedup over serial, %d threads, median of %d rounds", r.Threads, r.Rounds),
		"W: total work split over the threads (us, log scale)", "speedup")
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, w := range r.Grain.GrainsNS {
		ticks = append(ticks, plot.Tick{Value: w / 1e3, Label: fmt.Sprintf("%g", w/1e3)})
	}
	p.X.Tick.Marker = ticks
	xs := r.Grain.GrainsNS
	p.X.Min, p.X.Max = xs[0]/1e3/1.15, xs[len(xs)-1]/1e3*1.15
	top := 1.0 // the serial line stays in view
	var vs []any
	for _, row := range r.Grain.Rows {
		xys := make(plotter.XYs, len(xs))
		for i, w := range xs {
			xys[i] = plotter.XY{X: w / 1e3, Y: row.Speedup[i]}
			top = max(top, row.Speedup[i])
		}
		vs = append(vs, rowName(row.Runtime, row.Mode), xys)
	}
	if err := plotutil.AddLinePoints(p, vs...); err != nil {
		return nil, err
	}
	one, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 1}, {X: p.X.Max, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Color = color.Gray{Y: 96}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	p.Legend.Add("serial", one)
	p.Y.Min, p.Y.Max = 0, top*1.6 // room for the legend above the curves
	return p, nil
}

// overheadFloor is the least overhead drawn on the log axis: a figure at or
// below it (the construct cost less than the noise) is drawn there.
const overheadFloor = 10.0

// modeClass groups workgang's rows in the overhead plot: every construct has
// at most one row of each class ("caller-runs", the mode comparable to
// OpenMP; "plain / workers-only"; "team").
func modeClass(runtime, mode string) string {
	switch {
	case runtime != workgang:
		return runtime
	case strings.HasSuffix(mode, modeCaller):
		return workgang + " " + modeCaller
	case mode == modeTeam:
		return workgang + " " + modeTeam
	default:
		return workgang + " plain / workers-only"
	}
}

// errPoints are points with error bars from the least to the greatest round.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// nsTicks labels the powers of ten of a log axis in ns with their unit.
type nsTicks struct{}

func (nsTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := 1.0; v <= hi*1.0001; v *= 10 {
		if v < lo/1.0001 {
			continue
		}
		var label string
		switch {
		case v >= 1e6:
			label = fmt.Sprintf("%g ms", v/1e6)
		case v >= 1e3:
			label = fmt.Sprintf("%g us", v/1e3)
		default:
			label = fmt.Sprintf("%g ns", v)
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
	}
	return ts
}

// plotOverheads draws every row's median overhead per construct, with its
// min-max over rounds, the constructs along x, on a log y axis; a mode that
// cannot express a construct has no point there.
func plotOverheads(r *Result) (*plot.Plot, error) {
	p := newPanel(fmt.Sprintf("overhead per construct: median, min-max of %d rounds", r.Rounds),
		"", "overhead (log scale)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = nsTicks{}
	var ticks plot.ConstantTicks
	for i, c := range r.Constructs {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: c.Title})
	}
	p.X.Tick.Marker = ticks
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Min, p.X.Max = -0.5, float64(len(r.Constructs))-0.5

	// One series per class, in first-seen order.
	var order []string
	pts := map[string]*errPoints{}
	top := overheadFloor
	for i, c := range r.Constructs {
		for _, row := range c.Rows {
			if row.MedianNS == nil {
				continue
			}
			k := modeClass(row.Runtime, row.Mode)
			if _, ok := pts[k]; !ok {
				order = append(order, k)
				pts[k] = &errPoints{}
			}
			y := max(*row.MedianNS, overheadFloor)
			lo, hi := max(*row.MinNS, overheadFloor), max(*row.MaxNS, overheadFloor)
			top = max(top, hi)
			e := pts[k]
			e.XYs = append(e.XYs, plotter.XY{X: float64(i), Y: y})
			e.YErrors = append(e.YErrors, struct{ Low, High float64 }{y - lo, hi - y})
		}
	}
	n := float64(len(order))
	for j, k := range order {
		e := pts[k]
		for i := range e.XYs { // spread the series apart within a construct
			e.XYs[i].X += (float64(j) - (n-1)/2) * 0.14
		}
		s, err := plotter.NewScatter(e.XYs)
		if err != nil {
			return nil, err
		}
		s.Color = plotutil.Color(j)
		s.Shape = plotutil.Shape(j)
		s.Radius = vg.Points(3)
		bars, err := plotter.NewYErrorBars(e)
		if err != nil {
			return nil, err
		}
		bars.Color = s.Color
		bars.CapWidth = vg.Points(3)
		p.Add(bars, s)
		p.Legend.Add(k, s)
	}
	p.Y.Min, p.Y.Max = overheadFloor, top*30 // room for the legend above the points
	return p, nil
}
