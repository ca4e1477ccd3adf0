package filter

import (
	"image"
	"image/color"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/race"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/ranges"
	"github.com/workgang/workgang/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// noise returns an image of r's bounds with random pixels, as a sub-image
// of a larger one when sub is set (so its stride is wider than its rows).
func noise(r image.Rectangle, seed uint64, sub bool) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, 1))
	outer := r
	if sub {
		outer = r.Inset(-3)
	}
	m := image.NewRGBA(outer)
	for i := range m.Pix {
		m.Pix[i] = uint8(rng.Uint32())
	}
	return m.SubImage(r).(*image.RGBA)
}

// modelBlur is the blur's definition, pixel by pixel through the image
// API: the rounded mean of the 3x3 neighbourhood, coordinates clamped to
// the bounds.
func modelBlur(src *image.RGBA) *image.RGBA {
	b := src.Rect
	dst := image.NewRGBA(b)
	clamp := func(v, lo, hi int) int { return max(lo, min(v, hi-1)) }
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var sum [4]int
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					c := src.RGBAAt(clamp(x+dx, b.Min.X, b.Max.X), clamp(y+dy, b.Min.Y, b.Max.Y))
					sum[0], sum[1], sum[2], sum[3] = sum[0]+int(c.R), sum[1]+int(c.G), sum[2]+int(c.B), sum[3]+int(c.A)
				}
			}
			dst.SetRGBA(x, y, color.RGBA{uint8((sum[0] + 4) / 9), uint8((sum[1] + 4) / 9), uint8((sum[2] + 4) / 9), uint8((sum[3] + 4) / 9)})
		}
	}
	return dst
}

// modelGray is the grayscale's definition, pixel by pixel.
func modelGray(src *image.RGBA) *image.RGBA {
	dst := image.NewRGBA(src.Rect)
	for y := src.Rect.Min.Y; y < src.Rect.Max.Y; y++ {
		for x := src.Rect.Min.X; x < src.Rect.Max.X; x++ {
			c := src.RGBAAt(x, y)
			l := uint8((299*int(c.R) + 587*int(c.G) + 114*int(c.B) + 500) / 1000)
			dst.SetRGBA(x, y, color.RGBA{l, l, l, c.A})
		}
	}
	return dst
}

var sizes = []image.Rectangle{
	image.Rect(0, 0, 1, 1), image.Rect(0, 0, 2, 3), image.Rect(0, 0, 64, 64),
	image.Rect(5, -7, 70, 26), image.Rect(0, 0, 300, 257),
}

// pixels returns m's pixels row after row, without the stride's padding.
func pixels(m *image.RGBA) []byte {
	var out []byte
	for y := range m.Rect.Dy() {
		out = append(out, m.Pix[y*m.Stride:][:4*m.Rect.Dx()]...)
	}
	return out
}

// TestVariantsMatchModel checks every variant of every operation against
// the model, byte for byte, on a shared set, on whole images and on
// sub-images (whose stride is wider than a row).
func TestVariantsMatchModel(t *testing.T) {
	set, release := workers.Acquire("filter-test", 4)
	defer release()
	models := map[string]func(*image.RGBA) *image.RGBA{"gray": modelGray, "blur": modelBlur}
	for _, op := range Ops() {
		for i, r := range sizes {
			for _, sub := range []bool{false, true} {
				src := noise(r, uint64(i), sub)
				want := pixels(models[op.Name](src))
				for _, v := range op.Variants {
					dst := noise(r, 99, sub) // garbage to overwrite
					v.Run(set, dst, src)
					require.Equal(t, want, pixels(dst), "%s %s %v sub-image %v", op.Name, v.Name, r, sub)
				}
			}
		}
	}
}

// TestConcurrentCallers runs every variant from several goroutines at
// once on one shared set, then while another run holds the set, so that
// the ported runs run on their callers: the output must not change.
func TestConcurrentCallers(t *testing.T) {
	set, release := workers.Acquire("filter-test", 2)
	defer release()
	r := image.Rect(0, 0, 96, 80)
	src := noise(r, 7, false)
	check := func(v Variant, want *image.RGBA, callers int) {
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				dst := image.NewRGBA(r)
				for range 20 {
					v.Run(set, dst, src)
					if !assert.Equal(t, want.Pix, dst.Pix, "%s, %d callers", v.Name, callers) {
						return
					}
				}
			})
		}
		wg.Wait()
	}
	for _, op := range Ops() {
		want := modelBlur(src)
		if op.Name == "gray" {
			want = modelGray(src)
		}
		for _, v := range op.Variants {
			check(v, want, 4)
		}
		// Hold the set with a plain run whose copies wait, so that every
		// ported run finds it busy and runs on its caller.
		started, done := make(chan struct{}, 2), make(chan struct{})
		go set.RunN(tasks.Func("hold", func(int) { started <- struct{}{}; <-done }), 2)
		<-started
		before := set.Stats()
		ported := 0
		for _, v := range op.Variants {
			check(v, want, 1)
			if v.Name != Serial && v.Name != RowsGo && v.Name != LineGo {
				ported += 20
			}
		}
		after := set.Stats()
		close(done)
		assert.Equal(t, ported, int(after.BusyRuns+after.InlineRuns-before.BusyRuns-before.InlineRuns), "%s: ported runs on the caller of a held set", op.Name)
	}
}

// TestForChunksScratchPerCopy checks what ForChunks is for: the blur's
// scratch row is made once per copy, while the ForRange port makes one per
// chunk. The loop runs two copies (GOMAXPROCS 2, a 2-worker set), so
// ForChunks makes at most two scratch rows per call and the ForRange port
// one per chunk of the default schedule, ranges.ChunkSize(n, 2) rows each.
// The rows are counted in bytes allocated by every goroutine (the workers'
// too); a row of a 1024-pixel image is 8 KiB, so the loop's own small
// objects stay under a row.
func TestForChunksScratchPerCopy(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector adds allocations of its own")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	set := workers.New("filter-test", 2, workers.WithConcurrentRuns())
	defer set.Close()
	r := image.Rect(0, 0, 1024, 256)
	src, dst := noise(r, 3, false), image.NewRGBA(r)
	row := float64(2 * len(newSums(src)))
	blur := Ops()[1]
	rows := func(name string) float64 {
		v, ok := blur.Variant(name)
		require.True(t, ok, name)
		v.Run(set, dst, src) // warm the set and its pools
		const runs = 20
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			v.Run(set, dst, src)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / runs / row
	}
	chunks, line := rows(ForChunks), rows(LineForRange)
	t.Logf("scratch rows per call: ForChunks %.2f, ForRange port %.2f", chunks, line)
	assert.Less(t, chunks, 2.5, "ForChunks: at most one scratch row per copy")
	assert.GreaterOrEqual(t, chunks, 1.0, "ForChunks: a scratch row for the caller's copy")
	perChunk := ranges.ChunkSize(r.Dy(), 2)
	assert.GreaterOrEqual(t, line, float64(r.Dy()/perChunk), "the ForRange port: a scratch row per chunk")
	_, ok := blur.Variant("nope")
	assert.False(t, ok)
}
