// Package filter is two image operations, a 3x3 box blur and a grayscale
// conversion of 8-bit RGBA images, written the way image libraries write
// them: each fork-joins its rows through a small helper of the library's
// own. Two helper styles are common:
//
//   - Rows(start, stop, fn): the row indices go into a channel that
//     GOMAXPROCS goroutines drain, fn running once on each goroutine (so a
//     blur makes its scratch row once per goroutine);
//   - Line(length, fn): [0, length) is split into GOMAXPROCS contiguous
//     parts, fn(lo, hi) running once per part on a goroutine of its own.
//
// Par holds the helpers. Its zero value is the original: goroutines and a
// sync.WaitGroup per call. Par{Set: s} is the same helpers ported onto a
// workgang set, the operations unchanged: Rows hands each of s.Do's calls a
// channel of its own block of rows, Line becomes s.ForRange (or s.Do over
// the same parts, with SameParts). BlurChunks is the blur ported with ForChunks,
// which makes its scratch row once per copy rather than once per chunk.
// Every variant produces the same bytes.
package filter

import (
	"image"
	"iter"
	"runtime"
	"sync"

	"github.com/workgang/workgang/workers"
)

// Par is a library's fork-join helpers: on goroutines (Set nil) or on Set.
type Par struct {
	Set *workers.Workers
	// SameParts ports Line with Set.Do over the parts the goroutines
	// would get, rather than with Set.ForRange's chunks: fn is called as
	// often as on goroutines, so a body's per-call scratch is made as often.
	SameParts bool
}

// Rows calls fn, each call draining a channel of row indices, and returns
// when every call has returned; every row of start..stop-1 is received once.
// On goroutines fn runs min(GOMAXPROCS, stop-start) times, the calls sharing
// one channel holding every row. On Set the calls are Set.Do's, each with a
// channel of its own holding a contiguous block of the rows: calls on
// different processors then share no channel (a shared one moves its cache
// lines between them at every receive). Do balances the blocks: one per
// processor on a short range, up to 8 per processor (of 64 rows or more) on
// a long one, so a call that starts late or runs slow is made up for.
func (p Par) Rows(start, stop int, fn func(rows <-chan int)) {
	n := stop - start
	if n <= 0 {
		return
	}
	calls := min(runtime.GOMAXPROCS(0), n)
	if p.Set != nil {
		blocks := min(max(calls, n/64), 8*calls, n)
		p.Set.Do(blocks, func(i int) { fn(rowChan(start+n*i/blocks, start+n*(i+1)/blocks)) })
		return
	}
	rows := rowChan(start, stop)
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() { fn(rows) })
	}
	wg.Wait()
}

// Line splits [0, length) into parts and calls fn(lo, hi) once per part. On
// goroutines the parts are min(GOMAXPROCS, length) contiguous runs of equal
// size (give or take one), a goroutine each; on Set they are ForRange's
// chunks, claimed by its copies, or with SameParts the goroutines' parts,
// one call of Set.Do each.
func (p Par) Line(length int, fn func(lo, hi int)) {
	if length <= 0 {
		return
	}
	if p.Set != nil && !p.SameParts {
		p.Set.ForRange(length, func(_, lo, hi int) { fn(lo, hi) })
		return
	}
	parts := min(runtime.GOMAXPROCS(0), length)
	part := func(i int) { fn(length*i/parts, length*(i+1)/parts) }
	if p.Set != nil {
		p.Set.Do(parts, part)
		return
	}
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() { part(i) })
	}
	wg.Wait()
}

// rowChan returns a closed channel holding lo..hi-1.
func rowChan(lo, hi int) <-chan int {
	rows := make(chan int, hi-lo)
	for y := lo; y < hi; y++ {
		rows <- y
	}
	close(rows)
	return rows
}

// Gray is the per-pixel operation, no scratch: dst's pixel becomes the
// luma of src's (ITU-R BT.601 weights, rounded), alpha kept. Both images
// must have the same bounds.
type Gray struct{}

// Rows converts src into dst through p.Rows.
func (Gray) Rows(p Par, dst, src *image.RGBA) {
	p.Rows(0, src.Rect.Dy(), func(rows <-chan int) {
		for y := range rows {
			grayRows(dst, src, y, y+1)
		}
	})
}

// Line converts src into dst through p.Line.
func (Gray) Line(p Par, dst, src *image.RGBA) {
	p.Line(src.Rect.Dy(), func(lo, hi int) { grayRows(dst, src, lo, hi) })
}

// Serial converts src into dst on the caller.
func (Gray) Serial(dst, src *image.RGBA) { grayRows(dst, src, 0, src.Rect.Dy()) }

// grayRows converts rows lo..hi-1 (counted from the top of the images).
func grayRows(dst, src *image.RGBA, lo, hi int) {
	w := 4 * src.Rect.Dx()
	for y := lo; y < hi; y++ {
		s := src.Pix[y*src.Stride:][:w]
		d := dst.Pix[y*dst.Stride:][:w]
		for x := 0; x < w; x += 4 {
			l := uint8((299*uint32(s[x]) + 587*uint32(s[x+1]) + 114*uint32(s[x+2]) + 500) / 1000)
			d[x], d[x+1], d[x+2], d[x+3] = l, l, l, s[x+3]
		}
	}
}

// Blur is the operation with scratch: each channel of dst's pixel becomes
// the rounded mean of the 3x3 neighbourhood in src, edges repeated. A row
// needs a scratch row (the column sums of its three source rows). Both
// images must have the same bounds.
type Blur struct{}

// Rows blurs src into dst through p.Rows: a scratch row per call of fn.
func (Blur) Rows(p Par, dst, src *image.RGBA) {
	p.Rows(0, src.Rect.Dy(), func(rows <-chan int) {
		sums := newSums(src)
		for y := range rows {
			blurRows(dst, src, y, y+1, sums)
		}
	})
}

// Line blurs src into dst through p.Line: a scratch row per part, which on
// a set is a scratch row per chunk.
func (Blur) Line(p Par, dst, src *image.RGBA) {
	p.Line(src.Rect.Dy(), func(lo, hi int) { blurRows(dst, src, lo, hi, newSums(src)) })
}

// Chunks blurs src into dst with set.ForChunks: a scratch row per copy,
// used for every chunk the copy claims.
func (Blur) Chunks(set *workers.Workers, dst, src *image.RGBA) {
	set.ForChunks(src.Rect.Dy(), func(chunks iter.Seq2[int, int]) {
		sums := newSums(src)
		for lo, hi := range chunks {
			blurRows(dst, src, lo, hi, sums)
		}
	})
}

// Serial blurs src into dst on the caller.
func (Blur) Serial(dst, src *image.RGBA) { blurRows(dst, src, 0, src.Rect.Dy(), newSums(src)) }

// newSums returns a scratch row for src: one sum per channel of a row.
func newSums(src *image.RGBA) []uint16 { return make([]uint16, 4*src.Rect.Dx()) }

// blurRows blurs rows lo..hi-1, using sums (len 4*width) as scratch: for
// each row, the column sums of the three source rows around it (at most
// 3*255, so uint16 holds them), then each output channel is the sum of
// three neighbouring column sums over 9, rounded.
func blurRows(dst, src *image.RGBA, lo, hi int, sums []uint16) {
	w, h := 4*src.Rect.Dx(), src.Rect.Dy()
	for y := lo; y < hi; y++ {
		up := src.Pix[max(y-1, 0)*src.Stride:][:w]
		mid := src.Pix[y*src.Stride:][:w]
		down := src.Pix[min(y+1, h-1)*src.Stride:][:w]
		for i := range sums {
			sums[i] = uint16(up[i]) + uint16(mid[i]) + uint16(down[i])
		}
		d := dst.Pix[y*dst.Stride:][:w]
		// The first and last pixels repeat themselves as the missing
		// neighbour; the loop between them has both neighbours.
		for i := range 4 {
			d[i] = mean9(sums[i], sums[i], sums[min(i+4, w-4+i)])
			j := w - 4 + i
			d[j] = mean9(sums[max(j-4, i)], sums[j], sums[j])
		}
		for i := 4; i < w-4; i++ {
			d[i] = mean9(sums[i-4], sums[i], sums[i+4])
		}
	}
}

// mean9 returns the rounded ninth of the sum of three column sums.
func mean9(a, b, c uint16) uint8 { return uint8((uint32(a) + uint32(b) + uint32(c) + 4) / 9) }

// Variant names: the original helpers on goroutines, their ports onto a
// set, the ForChunks port of the blur, and the serial reference.
const (
	Serial       = "serial"
	RowsGo       = "rows/go"       // Rows on goroutines (original)
	RowsDo       = "rows/Do"       // Rows ported: Set.Do drains the channel
	LineGo       = "line/go"       // Line on goroutines (original)
	LineForRange = "line/ForRange" // Line ported: Set.ForRange
	LineDo       = "line/Do"       // Line ported: Set.Do over the same parts
	ForChunks    = "ForChunks"     // the blur ported with Set.ForChunks
)

// A Variant is one way to run an operation; Run ignores set for the
// variants that do not use one.
type Variant struct {
	Name string
	Run  func(set *workers.Workers, dst, src *image.RGBA)
}

// An Op is an operation and every variant of it.
type Op struct {
	Name     string
	Variants []Variant
}

// Variant returns op's variant named name, and false if it has none.
func (op Op) Variant(name string) (Variant, bool) {
	for _, v := range op.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// Ops returns the two operations: "gray" (serial and the five helper
// variants) and "blur" (the same and ForChunks).
func Ops() []Op {
	type rowsLine interface {
		Rows(p Par, dst, src *image.RGBA)
		Line(p Par, dst, src *image.RGBA)
		Serial(dst, src *image.RGBA)
	}
	variants := func(op rowsLine) []Variant {
		return []Variant{
			{Serial, func(_ *workers.Workers, dst, src *image.RGBA) { op.Serial(dst, src) }},
			{RowsGo, func(_ *workers.Workers, dst, src *image.RGBA) { op.Rows(Par{}, dst, src) }},
			{RowsDo, func(s *workers.Workers, dst, src *image.RGBA) { op.Rows(Par{Set: s}, dst, src) }},
			{LineGo, func(_ *workers.Workers, dst, src *image.RGBA) { op.Line(Par{}, dst, src) }},
			{LineForRange, func(s *workers.Workers, dst, src *image.RGBA) { op.Line(Par{Set: s}, dst, src) }},
			{LineDo, func(s *workers.Workers, dst, src *image.RGBA) { op.Line(Par{Set: s, SameParts: true}, dst, src) }},
		}
	}
	return []Op{
		{Name: "gray", Variants: variants(Gray{})},
		{Name: "blur", Variants: append(variants(Blur{}), Variant{ForChunks, Blur{}.Chunks})},
	}
}
