package mark_test

import (
	"flag"
	"fmt"
	"testing"

	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/workers"
)

var benchObjects = flag.Int("mark.objects", 1<<20, "objects per graph in the mark benchmarks")

// BenchmarkMark marks each shape serially, with the errgroup static
// partition and with the stealing marker at 1 and 2 workers. ns/op is one
// whole mark (bitmap clearing included); compare the sub-benchmarks of one
// shape with benchstat.
func BenchmarkMark(b *testing.B) {
	for _, shape := range mark.Shapes() {
		g := mark.NewGraph(shape, *benchObjects, 1)
		bm := mark.NewBitmap(g.Len())
		b.Run(fmt.Sprintf("%s/serial", shape), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				mark.MarkSerial(g, bm)
			}
		})
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/static/p=%d", shape, n), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					if _, err := mark.MarkStatic(g, bm, n); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/stealing/p=%d", shape, n), func(b *testing.B) {
				w := workers.New("bench", n)
				defer w.Close()
				m := mark.NewMarker(w)
				m.Mark(g, bm, n) // grow the deques and create the workers
				b.ReportAllocs()
				b.ResetTimer()
				var steals int64
				for range b.N {
					steals += m.Mark(g, bm, n).Steals
				}
				b.ReportMetric(float64(steals)/float64(b.N), "steals/op")
			})
		}
	}
}
