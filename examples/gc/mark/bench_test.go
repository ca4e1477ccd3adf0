package mark_test

import (
	"flag"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/workers"
)

var benchObjects = flag.Int("mark.objects", 1<<20, "objects per graph in the mark benchmarks")

// cpuTime returns the CPU time the process has used, in all its threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs mark b.N times and reports, besides ns/op (wall time), the
// CPU time per mark of all the process's threads: on a machine shared with
// other programs the wall time of a parallel mark swings with their load,
// while its CPU time shows the marking work (and the waiting workers'
// spinning) much more steadily.
func measure(b *testing.B, mark func()) {
	b.ReportAllocs()
	runtime.GC() // the graphs' construction garbage, collected now rather than during the marks
	b.ResetTimer()
	c0 := cpuTime()
	for range b.N {
		mark()
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkMark marks each shape serially, with the errgroup static
// partition and with the stealing marker at 1 and 2 workers. ns/op is one
// whole mark (bitmap clearing included); compare the sub-benchmarks of one
// shape with benchstat. Every name has the same depth, so that a -bench
// pattern like 'Mark/random/.*/p=2' selects the parallel marks of a shape.
func BenchmarkMark(b *testing.B) {
	for _, shape := range mark.Shapes() {
		g := mark.NewGraph(shape, *benchObjects, 1)
		bm := mark.NewBitmap(g.Len())
		b.Run(fmt.Sprintf("%s/serial/p=1", shape), func(b *testing.B) {
			measure(b, func() { mark.MarkSerial(g, bm) })
		})
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/static/p=%d", shape, n), func(b *testing.B) {
				measure(b, func() {
					if _, err := mark.MarkStatic(g, bm, n); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run(fmt.Sprintf("%s/stealing/p=%d", shape, n), func(b *testing.B) {
				w := workers.New("bench", n)
				defer w.Close()
				m := mark.NewMarker(w)
				m.Mark(g, bm, n) // grow the deques and create the workers
				var steals int64
				measure(b, func() { steals += m.Mark(g, bm, n).Steals })
				b.ReportMetric(float64(steals)/float64(b.N), "steals/op")
			})
		}
	}
}
