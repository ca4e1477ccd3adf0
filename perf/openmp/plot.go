package openmp

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot size: one panel; the file stacks two, three with the mixed-process
// mode.
const (
	panelWidth  = 20 * vg.Centimeter
	panelHeight = 12 * vg.Centimeter
)

// plotFile is the figure's file name in the -svg directory.
const plotFile = "openmp.svg"

// Plot writes r's figure into dir as openmp.svg and returns its path: the
// grain sweep's speedups against W (log scale) above the constructs'
// overheads (log scale), every runtime and mode a series, and with the
// mixed-process mode its mixed/alone ratios below them.
func Plot(r *Result, dir string) (string, error) {
	grain, err := plotGrain(r)
	if err != nil {
		return "", err
	}
	over, err := plotOverheads(r)
	if err != nil {
		return "", err
	}
	panels := []*plot.Plot{grain, over}
	if r.Mixed != nil {
		mixed, err := plotMixed(r.Mixed, r.Rounds)
		if err != nil {
			return "", err
		}
		panels = append(panels, mixed)
	}
	c := vgsvg.New(panelWidth, vg.Length(len(panels))*panelHeight)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(10), PadTop: vg.Points(4), PadRight: vg.Points(6)}
	for i, p := range panels {
		p.Draw(tiles.At(dc, 0, i))
	}
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
	if err := addErrSeries(p, order, pts, 0.14); err != nil {
		return nil, err
	}
	p.Y.Min, p.Y.Max = overheadFloor, top*30 // room for the legend above the points
	return p, nil
}

// addErrSeries adds the series pts, in order, to p as points with error
// bars, each in a colour and shape of its own, spread apart along x by
// spread per series so that the series of one construct do not overlap.
func addErrSeries(p *plot.Plot, order []string, pts map[string]*errPoints, spread float64) error {
	n := float64(len(order))
	for j, k := range order {
		e := pts[k]
		for i := range e.XYs {
			e.XYs[i].X += (float64(j) - (n-1)/2) * spread
		}
		s, err := plotter.NewScatter(e.XYs)
		if err != nil {
			return err
		}
		s.Color = plotutil.Color(j)
		s.Shape = plotutil.Shape(j)
		s.Radius = vg.Points(3)
		bars, err := plotter.NewYErrorBars(e)
		if err != nil {
			return err
		}
		bars.Color = s.Color
		bars.CapWidth = vg.Points(3)
		p.Add(bars, s)
		p.Legend.Add(k, s)
	}
	return nil
}

// plotMixed draws every row's mixed/alone ratio per construct, one series
// per mode class and gap, with the min-max of the rounds' ratios and the
// goal as a dashed line.
func plotMixed(m *Mixed, rounds int) (*plot.Plot, error) {
	p := newPanel(fmt.Sprintf("mixed process / alone: time per construct, median, min-max of %d rounds", rounds),
		"", "mixed / alone (log scale)")
	// The constructs in their order of first appearance.
	var titles []string
	index := map[string]int{}
	for _, row := range m.Rows {
		if _, ok := index[row.Title]; !ok {
			index[row.Title] = len(titles)
			titles = append(titles, row.Title)
		}
	}
	var ticks plot.ConstantTicks
	for i, t := range titles {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: t})
	}
	p.X.Tick.Marker = ticks
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Min, p.X.Max = -0.5, float64(len(titles))-0.5

	var order []string
	pts := map[string]*errPoints{}
	top, bottom := MixedLimit, 1.0
	for _, row := range m.Rows {
		for gi, s := range row.Mixed {
			k := fmt.Sprintf("%s, W=%s", modeClass(workgang, row.Mode), fmtWork(m.Gaps[gi].RequestedNS))
			if _, ok := pts[k]; !ok {
				order = append(order, k)
				pts[k] = &errPoints{}
			}
			y := *s.Ratio
			top, bottom = max(top, *s.RatioMax), min(bottom, *s.RatioMin)
			e := pts[k]
			e.XYs = append(e.XYs, plotter.XY{X: float64(index[row.Title]), Y: y})
			e.YErrors = append(e.YErrors, struct{ Low, High float64 }{y - *s.RatioMin, *s.RatioMax - y})
		}
	}
	if err := addErrSeries(p, order, pts, 0.12); err != nil {
		return nil, err
	}
	goal, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: MixedLimit}, {X: p.X.Max, Y: MixedLimit}})
	if err != nil {
		return nil, err
	}
	goal.Color = color.Gray{Y: 96}
	goal.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(goal)
	p.Legend.Add(fmt.Sprintf("goal %.2f", MixedLimit), goal)
	p.Y.Scale = plot.LogScale{}
	p.Y.Min, p.Y.Max = bottom/1.5, top*4 // room for the legend above the points
	var yt plot.ConstantTicks
	for _, v := range []float64{0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32} {
		if v >= p.Y.Min && v <= p.Y.Max {
			yt = append(yt, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	p.Y.Tick.Marker = yt
	return p, nil
}
