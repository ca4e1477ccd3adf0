package openmp

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/workgang/workgang/perf/internal/plotkit"
	"github.com/workgang/workgang/perf/internal/verdict"
)

// plotFile is the figure's file name in the -svg directory.
const plotFile = "openmp.svg"

// Plot writes r's figure into dir as openmp.svg under caption (where and
// how it was measured) and returns its path: the grain sweep's speedups
// against W above the constructs' overheads, and with the mixed-process
// mode its mixed/alone ratios below them. A runtime or mode has the same
// colour in every panel (plotkit.Styles); the legends stand beside the
// data. When the section withheld its comparisons (other programs competed
// for the CPUs), every panel's title says so.
func Plot(r *Result, dir, caption string) (string, error) {
	grain, err := plotGrain(r)
	if err != nil {
		return "", err
	}
	figs := []*plotkit.Figure{grain, plotOverheads(r)}
	if r.Mixed != nil {
		figs = append(figs, plotMixed(r.Mixed, r.Rounds))
	}
	if r.withheld != "" && r.OthersCPUs != nil {
		for _, f := range figs {
			f.AddNote(verdict.TitleNote(*r.OthersCPUs))
		}
	}
	path := filepath.Join(dir, plotFile)
	return path, plotkit.Save(path, caption, figs...)
}

// rowName names a row in a legend.
func rowName(runtime, mode string) string {
	if mode == "" {
		return runtime
	}
	return runtime + " " + mode
}

// rowStyle is a row's style: its class's colour (plotkit.Styles), and for
// workgang's ForRange rows the dash-dotted line and square that tell them
// from the RunN rows of the same class.
func rowStyle(runtime, mode string, i int) plotkit.Style {
	st := plotkit.StyleOf(modeClass(runtime, mode), i)
	if strings.HasPrefix(mode, "ForRange") {
		st.Dashes, st.Glyph = plotkit.DashDot, plotkit.Styles["workgang ForRange"].Glyph
	}
	return st
}

// plotGrain draws every row's speedup against W.
func plotGrain(r *Result) (*plotkit.Figure, error) {
	f := plotkit.New(fmt.Sprintf("grain sweep, %d threads: speedup over serial (median of %d rounds)", r.Threads, r.Rounds),
		"W: total work split over the threads (µs, log scale)", "speedup (higher is better)")
	p := f.P
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, w := range r.Grain.GrainsNS {
		ticks = append(ticks, plot.Tick{Value: w / 1e3, Label: fmt.Sprintf("%g", w/1e3)})
	}
	p.X.Tick.Marker = ticks
	xs := r.Grain.GrainsNS
	p.X.Min, p.X.Max = xs[0]/1e3/1.15, xs[len(xs)-1]/1e3*1.15
	rows := make([]plotter.XYs, len(r.Grain.Rows))
	for i, row := range r.Grain.Rows {
		rows[i] = make(plotter.XYs, len(xs))
		for k, w := range xs {
			rows[i][k] = plotter.XY{X: w / 1e3, Y: row.Speedup[k]}
		}
	}
	bound := min(r.Threads, verdict.CPUs())
	clip := plotkit.ClipSpeedups(float64(bound), rows...)
	for i, row := range r.Grain.Rows {
		xys := rows[i]
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		st := rowStyle(row.Runtime, row.Mode, i)
		l.Color, l.Dashes, l.Width = st.Color, st.Dashes, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = st.Color, st.Glyph, vg.Points(3)
		p.Add(l, pts)
		f.Legend.Add(rowName(row.Runtime, row.Mode), l, pts)
	}
	one, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 1}, {X: p.X.Max, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Color, one.Dashes = color.Black, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	f.Legend.Add("serial (speedup 1)", one)
	if err := f.MarkSpeedupBound(clip, fmt.Sprintf("%d threads on %d CPUs: above is impossible", r.Threads, verdict.CPUs())); err != nil {
		return nil, err
	}
	return f, nil
}

// overheadFloor is where the overhead axis starts (ns): the bars grow from
// it, and an overhead below zero (noise) is marked "<0" there.
const overheadFloor = 10.0

// modeClass groups workgang's rows in the construct panels: every construct
// has at most one row of each class ("caller-runs", the mode comparable to
// OpenMP; "plain / workers-only"; "team"). Its name keys the row's style.
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
			label = fmt.Sprintf("%g µs", v/1e3)
		default:
			label = fmt.Sprintf("%g ns", v)
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
	}
	return ts
}

// plotOverheads draws every row's median overhead per construct as a bar
// with its min-max over rounds as a whisker, the constructs down the y axis,
// overheads along a log x axis; a mode that cannot express a construct has
// no bar there.
func plotOverheads(r *Result) *plotkit.Figure {
	f := plotkit.New(fmt.Sprintf("overhead per construct (lower is better; whisker: min-max of %d rounds)", r.Rounds),
		"overhead (log scale; <0: below zero, noise)", "")
	var titles []string
	for _, c := range r.Constructs {
		titles = append(titles, c.Title)
	}
	ys := f.Categories(titles)
	f.P.X.Scale = plot.LogScale{}
	f.P.X.Tick.Marker = nsTicks{}
	bs := plotkit.NewBarSet(len(titles), overheadFloor)
	top := overheadFloor * 10
	for i, c := range r.Constructs {
		for _, row := range c.Rows {
			if row.MedianNS == nil {
				continue
			}
			k := modeClass(row.Runtime, row.Mode)
			b := bs.Series(k, plotkit.StyleOf(k, 0).Color)
			y := ys(i)
			b.Values[y], b.Lo[y], b.Hi[y] = *row.MedianNS, *row.MinNS, *row.MaxNS
			top = max(top, *row.MaxNS)
		}
	}
	f.P.X.Min, f.P.X.Max = overheadFloor, math.Pow(10, math.Ceil(math.Log10(top)))
	bs.AddTo(f)
	return f
}

// plotMixed draws every row's mixed/alone ratio per construct as a bar from
// 1 (as fast as alone), one series per mode class and gap (the second gap
// in a tint of the class's colour), with the min-max of the rounds' ratios
// as a whisker and the goal as a dashed line.
func plotMixed(m *Mixed, rounds int) *plotkit.Figure {
	f := plotkit.New(fmt.Sprintf("mixed process / alone (lower is better; whisker: min-max of %d rounds)", rounds),
		"mixed / alone (log scale; 1: as fast as alone)", "")
	var titles []string
	index := map[string]int{}
	for _, row := range m.Rows {
		if _, ok := index[row.Title]; !ok {
			index[row.Title] = len(titles)
			titles = append(titles, row.Title)
		}
	}
	ys := f.Categories(titles)
	bs := plotkit.NewBarSet(len(titles), 1)
	top, bottom := m.Limit, 1.0
	for _, row := range m.Rows {
		class := modeClass(workgang, row.Mode)
		for gi, s := range row.Mixed {
			if s.Ratio == nil {
				continue
			}
			c := plotkit.StyleOf(class, 0).Color
			if gi > 0 {
				c = plotkit.Tint(c)
			}
			b := bs.Series(fmt.Sprintf("%s, W=%s", class, strings.Replace(fmtWork(m.Gaps[gi].RequestedNS), "us", "µs", 1)), c)
			y := ys(index[row.Title])
			b.Values[y], b.Lo[y], b.Hi[y] = *s.Ratio, *s.RatioMin, *s.RatioMax
			top, bottom = max(top, *s.RatioMax), min(bottom, *s.RatioMin)
		}
	}
	plotkit.LogAxis(&f.P.X, bottom/1.2, top*1.2)
	bs.AddTo(f)
	goal, err := plotter.NewLine(plotter.XYs{{X: m.Limit, Y: f.P.Y.Min}, {X: m.Limit, Y: f.P.Y.Max}})
	if err == nil {
		goal.Color = color.Gray{Y: 96}
		goal.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		f.P.Add(goal)
		f.Legend.Add(fmt.Sprintf("goal %.2f", m.Limit), goal)
	}
	return f
}
