package bench

import (
	"bytes"
	"fmt"
	"image"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/examples/ports/filter"
	"github.com/workgang/workgang/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	rows, err := Run(Options{Sides: []int{8, 33}, Callers: []int{1, 2}, Rounds: 3, Batch: time.Millisecond, Seed: 2})
	require.NoError(t, err)
	require.Len(t, rows, 2*2*len(Pairs))
	for i, r := range rows {
		assert.Equal(t, Pairs[i%len(Pairs)], r.Pair)
		assert.Positive(t, r.PortNS, r.Pair)
		assert.Positive(t, r.OrigNS, r.Pair)
		assert.Positive(t, r.SerialNS, r.Pair)
		assert.LessOrEqual(t, r.RatioMin, r.Ratio, r.Pair)
		assert.LessOrEqual(t, r.Ratio, r.RatioMax, r.Pair)
		assert.Positive(t, r.OrigAllocs, "an original makes goroutines: %v", r.Pair)
		assert.InDelta(t, 0.5, r.OnCaller, 0.5, r.Pair)
	}
	assert.Equal(t, 8, rows[0].Side)
	assert.Equal(t, 2, rows[len(Pairs)].Callers)
	var out bytes.Buffer
	Print(&out, rows)
	assert.Equal(t, 1+len(rows)+1, strings.Count(out.String(), "\n"), "head, rows, the * note")
	assert.Contains(t, out.String(), "33x33")
	assert.Contains(t, out.String(), filter.LineForRange+"*")

	for _, bad := range []Options{{}, {Sides: []int{0}, Callers: []int{1}, Rounds: 1, Batch: 1}, {Sides: []int{8}, Callers: []int{1}, Rounds: 0, Batch: 1}} {
		_, err := Run(bad)
		assert.ErrorContains(t, err, "ports: bad options")
	}
}

// BenchmarkPorts times every variant of every operation at the three
// sizes, with 1 and 2 goroutines calling at once on images of their own:
// an op is one call from each caller, so ns/op is the time per call as a
// caller sees it, allocs/op those of all callers' calls. Compare port and
// original with benchstat, or read Run's ratios.
func BenchmarkPorts(b *testing.B) {
	set, release := workers.Acquire("ports", runtime.NumCPU())
	defer release()
	for _, side := range DefaultOptions().Sides {
		r := image.Rect(0, 0, side, side)
		src := image.NewRGBA(r)
		for i := range src.Pix {
			src.Pix[i] = uint8(i * 7)
		}
		for _, callers := range DefaultOptions().Callers {
			dsts := make([]*image.RGBA, callers)
			for i := range dsts {
				dsts[i] = image.NewRGBA(r)
			}
			for _, op := range filter.Ops() {
				for _, v := range op.Variants {
					b.Run(fmt.Sprintf("%s/%dx%d/callers=%d/%s", op.Name, side, side, callers, v.Name), func(b *testing.B) {
						b.ReportAllocs()
						var wg sync.WaitGroup
						for _, d := range dsts[1:] {
							wg.Go(func() {
								for range b.N {
									v.Run(set, d, src)
								}
							})
						}
						for range b.N {
							v.Run(set, dsts[0], src)
						}
						wg.Wait()
					})
				}
			}
		}
	}
}
