package plotkit

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HBars is one series of horizontal bars over categories along the y axis,
// category i at y = i: each bar runs from Base to its value along x, with a
// whisker from its Lo to its Hi where those are given. On a log x axis
// (Base > 0) a value at or below zero cannot be drawn: instead of a bar
// clipped to some floor, the category gets the mark "<0" at Base; a whisker
// reaching below zero ends at Base with the same mark.
type HBars struct {
	Values []float64 // NaN: nothing for the category (the mode cannot express it)
	Lo, Hi []float64 // optional, per value
	Base   float64
	Width  vg.Length // of a bar
	Offset vg.Length // of this series' bars from the category's line
	Color  color.Color
}

// Tint returns c mixed half with white: a second series of the same
// runtime or mode (another parameter) in the same hue.
func Tint(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	f := func(v uint32) uint8 { return uint8((v>>8 + 255) / 2) }
	return color.RGBA{R: f(r), G: f(g), B: f(b), A: 255}
}

// markStyle is the style of the "<0" marks.
func (b *HBars) markStyle() draw.TextStyle {
	return draw.TextStyle{Color: b.Color, Font: font.From(plot.DefaultFont, 8), Handler: plot.DefaultTextHandler, YAlign: draw.YCenter}
}

// Plot implements plot.Plotter.
func (b *HBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	x0 := trX(b.Base)
	line := draw.LineStyle{Color: color.Gray{Y: 40}, Width: vg.Points(0.8)}
	for i, v := range b.Values {
		if math.IsNaN(v) {
			continue
		}
		y := trY(float64(i)) + b.Offset
		if v <= 0 {
			c.FillText(b.markStyle(), vg.Point{X: x0 + vg.Points(2), Y: y}, "<0")
			continue
		}
		x1 := trX(v)
		rect := []vg.Point{{X: x0, Y: y - b.Width/2}, {X: x0, Y: y + b.Width/2}, {X: x1, Y: y + b.Width/2}, {X: x1, Y: y - b.Width/2}}
		c.FillPolygon(b.Color, c.ClipPolygonX(rect))
		if b.Lo == nil || b.Hi == nil || b.Hi[i] <= 0 {
			continue
		}
		lo, hi := b.Lo[i], b.Hi[i]
		xl := x0
		if lo > 0 {
			xl = trX(lo)
		}
		c.StrokeLines(line, c.ClipLinesX([]vg.Point{{X: xl, Y: y}, {X: trX(hi), Y: y}})...)
		for _, x := range []vg.Length{xl, trX(hi)} {
			c.StrokeLines(line, c.ClipLinesX([]vg.Point{{X: x, Y: y - b.Width/3}, {X: x, Y: y + b.Width/3}})...)
		}
		if lo <= 0 {
			st := b.markStyle()
			st.XAlign = draw.XRight
			c.FillText(st, vg.Point{X: xl - vg.Points(1), Y: y}, "<0")
		}
	}
}

// DataRange implements plot.DataRanger: the positive values and whisker
// ends, and Base, along x; the categories along y.
func (b *HBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = b.Base, b.Base
	for i, v := range b.Values {
		for _, x := range []float64{v, at(b.Lo, i), at(b.Hi, i)} {
			if x > 0 {
				xmin, xmax = min(xmin, x), max(xmax, x)
			}
		}
	}
	return xmin, xmax, 0, float64(len(b.Values) - 1)
}

// at returns xs[i], or NaN when xs is nil.
func at(xs []float64, i int) float64 {
	if xs == nil {
		return math.NaN()
	}
	return xs[i]
}

// Thumbnail implements plot.Thumbnailer: a filled box in the legend.
func (b *HBars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.Color, c.ClipPolygonY(pts))
}

// Categories puts names down the figure's y axis, the first at the top,
// without tick marks (the names are the labels), gives each a centimetre of
// the figure's height, and returns name i's index in an HBars series'
// values (HBars draws value j at y = j).
func (f *Figure) Categories(names []string) func(i int) int {
	n := len(names)
	y := func(i int) int { return n - 1 - i }
	var ticks plot.ConstantTicks
	for i, t := range names {
		ticks = append(ticks, plot.Tick{Value: float64(y(i)), Label: t})
	}
	f.P.Y.Tick.Marker = ticks
	// No tick marks (the names are the labels), but their length of room
	// between each name and the bars: a fifth of the longest name, for a
	// renderer whose font is wider than the measured one.
	widest := vg.Length(0)
	for _, t := range names {
		widest = max(widest, f.P.Y.Tick.Label.Width(t))
	}
	f.P.Y.Tick.Length = widest*(fallbackFontSlack-1) + vg.Points(4)
	f.P.Y.Tick.LineStyle.Color = color.Transparent // drawn, so that gonum keeps the room
	f.P.Y.Min, f.P.Y.Max = -0.5, float64(n)-0.5
	f.Height = vg.Length(n)*vg.Centimeter + 4*vg.Centimeter
	return y
}

// BarSet is the bar series of a figure with categories, keyed by their
// legend entries, in first-seen order.
type BarSet struct {
	n     int
	base  float64
	order []string
	m     map[string]*HBars
}

// NewBarSet returns a set for n categories, its bars growing from base.
func NewBarSet(n int, base float64) *BarSet {
	return &BarSet{n: n, base: base, m: map[string]*HBars{}}
}

// Series returns the series whose legend entry is label, creating it in
// colour c with nothing in any category.
func (s *BarSet) Series(label string, c color.Color) *HBars {
	if b, ok := s.m[label]; ok {
		return b
	}
	b := &HBars{Base: s.base, Color: c, Values: make([]float64, s.n), Lo: make([]float64, s.n), Hi: make([]float64, s.n)}
	for i := range b.Values {
		b.Values[i] = math.NaN()
	}
	s.order = append(s.order, label)
	s.m[label] = b
	return b
}

// AddTo sizes the series' bars to share each category's centimetre (see
// Categories), the first series at the top, adds them to f and names them
// in its legend.
func (s *BarSet) AddTo(f *Figure) {
	n := vg.Length(max(len(s.order), 1))
	w := 0.8 * vg.Centimeter / n
	for j, label := range s.order {
		b := s.m[label]
		b.Width = w * 0.9
		b.Offset = -(vg.Length(j) - (n-1)/2) * w
		f.P.Add(b)
		f.Legend.Add(label, b)
	}
}
