// Package plotkit is what the perf harness's plots share: one style per
// implementation and runtime (a colour means the same thing in every
// figure and panel), figures whose legend sits beside the data rather than
// over it, a caption saying where and how the figures were measured, and
// horizontal bars for categories on a log axis.
package plotkit

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Width is every file's width; a figure's Height is its own.
const Width = 24 * vg.Centimeter

// fallbackFontSlack is how much wider than measured the legend's column is
// kept, for renderers that draw the text in a wider font: the layout is
// measured with gonum's Liberation fonts (metric-compatible with Times New
// Roman and Arial, so most renderers draw them the same width); a renderer
// with neither falls back to a font such as DejaVu Serif, about a fifth
// wider.
const fallbackFontSlack = 1.2

// Style is how one implementation or runtime is drawn: the same in every
// figure.
type Style struct {
	Color  color.Color
	Dashes []vg.Length
	Glyph  draw.GlyphDrawer
}

// RGB is a colour from its hex digits.
func RGB(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// Line patterns: workgang's series are solid (dash-dotted on the long-lived
// set of the empty-task sections), the peers' and OpenMP runtimes' dashed.
var (
	Solid   []vg.Length
	DashDot = []vg.Length{vg.Points(7), vg.Points(2), vg.Points(2), vg.Points(2)}
	Dashed  = []vg.Length{vg.Points(5), vg.Points(3)}
	Dotted  = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
)

// Styles maps implementation and runtime names to their styles: workgang's
// in blues and greens (indigo and olive on the long-lived set), the peers
// in warm colours, the OpenMP runtimes in red and wine, serial in black
// (the Okabe-Ito palette and Paul Tol's, which stay distinguishable with the
// common colour-vision deficiencies). Caller-runs is green wherever it
// appears, plain (every copy on a worker) blue, a team dark green.
var Styles = map[string]Style{
	"workgang":             {RGB(0x0072B2), Solid, draw.CircleGlyph{}},
	"workgang+caller":      {RGB(0x009E73), Solid, draw.TriangleGlyph{}},
	"workgang ForRange":    {RGB(0x56B4E9), Solid, draw.SquareGlyph{}},
	"workgang RunTeam":     {RGB(0x117733), Solid, draw.PyramidGlyph{}},
	"1set:workgang":        {RGB(0x332288), DashDot, draw.RingGlyph{}},
	"1set:workgang+caller": {RGB(0x999933), DashDot, draw.PyramidGlyph{}},
	"go+WaitGroup":         {RGB(0xE69F00), Dashed, draw.CrossGlyph{}},
	"errgroup":             {RGB(0xD55E00), Dashed, draw.PlusGlyph{}},
	"chanpool":             {RGB(0xCC79A7), Dashed, draw.BoxGlyph{}},
	"serial":               {color.Black, Dotted, draw.CircleGlyph{}},
	"libgomp":              {RGB(0xCC3311), Dashed, draw.BoxGlyph{}},
	"libomp":               {RGB(0x882255), Dashed, draw.CrossGlyph{}},
	// The openmp section's workgang modes, by what they are.
	"workgang caller-runs":          {RGB(0x009E73), Solid, draw.TriangleGlyph{}},
	"workgang plain / workers-only": {RGB(0x0072B2), Solid, draw.CircleGlyph{}},
	"workgang team":                 {RGB(0x117733), Solid, draw.PyramidGlyph{}},
}

// StyleOf returns name's style; a name without one (a new section's) gets
// one of plotutil's, the i-th.
func StyleOf(name string, i int) Style {
	if s, ok := Styles[name]; ok {
		return s
	}
	return Style{plotutil.Color(i), plotutil.Dashes(i), plotutil.Shape(i)}
}

// Figure is a plot with its legend kept apart, drawn beside the data area.
type Figure struct {
	P      *plot.Plot
	Legend plot.Legend
	Height vg.Length
}

// New returns a figure with a title, axis labels and a grid.
func New(title, x, y string) *Figure {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(10) // clear of the figure above
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(10)
	l.Padding = vg.Points(3)
	return &Figure{P: p, Legend: l, Height: 12 * vg.Centimeter}
}

// AddNote ends the figure's title with note, unless note is empty: what a
// reader must know before reading the figure (its section's verdict was
// withheld).
func (f *Figure) AddNote(note string) {
	if note != "" {
		f.P.Title.Text += " " + note
	}
}

// draw draws the figure into dc: the plot on the left, the legend in a
// column to its right, its top level with the top of the data area.
func (f *Figure) draw(dc draw.Canvas) {
	gap := vg.Points(12)
	lw := f.Legend.Rectangle(dc).Size().X*fallbackFontSlack + gap
	area := draw.Crop(dc, 0, -lw, 0, 0)
	f.P.Draw(area)
	data := f.P.DataCanvas(area)
	f.Legend.Draw(draw.Crop(dc, dc.Size().X-lw+gap/2, 0, 0, data.Max.Y-dc.Max.Y))
}

// figureGap keeps a figure's title clear of the axis label of the figure
// above it.
const figureGap = 10

// captionHeight is the room of a caption line at the top of a file.
const captionHeight = 12

// Save writes figs, stacked top to bottom, as an SVG file at path, under
// the lines of caption (the machine, Go version, date and command the
// figures come from).
func Save(path, caption string, figs ...*Figure) error {
	lines := strings.Split(caption, "\n")
	height := vg.Points(captionHeight * float64(len(lines)))
	for _, f := range figs {
		height += f.Height + vg.Points(figureGap)
	}
	c := vgsvg.New(Width, height)
	margin := vg.Points(6) // the renderer's font may be taller or wider than measured
	dc := draw.Crop(draw.New(c), margin, -margin, margin, -margin)
	sty := draw.TextStyle{Color: color.Gray{Y: 60}, Font: font.From(plot.DefaultFont, 8), Handler: plot.DefaultTextHandler}
	top := dc.Max.Y
	for _, l := range lines {
		dc.FillText(sty, vg.Point{X: dc.Min.X, Y: top - vg.Points(9)}, l)
		top -= vg.Points(captionHeight)
	}
	for _, f := range figs {
		f.draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X, Y: max(dc.Min.Y, top-f.Height)}, Max: vg.Point{X: dc.Max.X, Y: top}}})
		top -= f.Height + vg.Points(figureGap)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// LinearY gives the plot a linear y axis from 0 to a little above the
// largest y y, top, and of floor (at least floor, so that a reference line at
// floor shows), with ticks at a step that gives about six labels.
func (f *Figure) LinearY(top, floor float64) {
	top = max(top, floor) * 1.08
	if top <= 0 || math.IsNaN(top) || math.IsInf(top, 0) {
		top = 1 // nothing measured: any axis will do
	}
	step := niceStep(top / 6)
	f.P.Y.Min, f.P.Y.Max = 0, math.Ceil(top/step)*step
	var ticks plot.ConstantTicks
	for k := 0.0; k*step <= f.P.Y.Max+step/2; k++ {
		ticks = append(ticks, plot.Tick{Value: k * step, Label: strconv.FormatFloat(k*step, 'f', -1, 32)})
	}
	f.P.Y.Tick.Marker = ticks
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

// LogAxis gives ax a logarithmic scale over [lo, hi], with ticks at 1,
// 2 and 5 times the powers of ten in it.
func LogAxis(ax *plot.Axis, lo, hi float64) {
	ax.Scale = plot.LogScale{}
	ax.Min, ax.Max = lo, hi
	var ticks plot.ConstantTicks
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if y := m * math.Pow(10, e); y >= lo && y <= hi {
				ticks = append(ticks, plot.Tick{Value: y, Label: strconv.FormatFloat(y, 'f', -1, 32)})
			}
		}
	}
	ax.Tick.Marker = ticks
}

// Clip is what ClipSpeedups did: the bound no speedup of the figure can
// exceed, the level it clipped at (half above), the top the y axis needs,
// and the clipped points.
type Clip struct {
	Bound, Level, Top float64
	Points            plotter.XYs
}

// ClipSpeedups clips the points of series, speedups that no run of the
// figure can take above bound (its copies or CPUs), at a half above bound,
// in place: a disturbed measurement far above the possible would otherwise
// squash every other series. It runs before the series are added (a
// plotter copies its points); MarkSpeedupBound then draws what it did.
func ClipSpeedups(bound float64, series ...plotter.XYs) Clip {
	c := Clip{Bound: bound, Level: 1.5 * bound, Top: bound}
	for _, xys := range series {
		for i := range xys {
			if xys[i].Y > c.Level {
				xys[i].Y = c.Level
				c.Points = append(c.Points, xys[i])
			}
			c.Top = max(c.Top, xys[i].Y)
		}
	}
	return c
}

// MarkSpeedupBound draws c's bound as a grey dashed line named label, marks
// the clipped points with black triangles (named in the legend only if
// any) and gives the figure a linear y axis from 0 to the top c needs.
func (f *Figure) MarkSpeedupBound(c Clip, label string) error {
	l, err := plotter.NewLine(plotter.XYs{{X: f.P.X.Min, Y: c.Bound}, {X: f.P.X.Max, Y: c.Bound}})
	if err != nil {
		return err
	}
	l.Color, l.Dashes = color.Gray{Y: 150}, []vg.Length{vg.Points(4), vg.Points(3)}
	f.P.Add(l)
	f.Legend.Add(label, l)
	if len(c.Points) > 0 {
		sc, err := plotter.NewScatter(c.Points)
		if err != nil {
			return err
		}
		sc.Shape, sc.Color, sc.Radius = draw.PyramidGlyph{}, color.Black, vg.Points(5)
		f.P.Add(sc)
		f.Legend.Add(fmt.Sprintf("above %.3g, clipped (impossible)", c.Level), sc)
	}
	f.LinearY(c.Top, 1)
	return nil
}
