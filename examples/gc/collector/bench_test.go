package collector_test

import (
	"fmt"
	"testing"

	"github.com/workgang/workgang/examples/gc/collector"
	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/workers"
)

// BenchmarkCollect is one pause of the collector on a worker set of 2 and of
// the serial reference, on the perf harness's small (1Ki slots) and large
// (128Ki slots) heaps, each collection starting from the same mutated heap
// (restored outside the timer).
func BenchmarkCollect(b *testing.B) {
	for _, slots := range []int{1 << 10, 128 << 10} {
		master := heap.New(mark.Random, slots, 1)
		master.Mutate()
		b.Run(fmt.Sprintf("slots=%d/workgang", slots), func(b *testing.B) {
			w := workers.New("bench", 2)
			defer w.Close()
			c := collector.New(w)
			h := master.Clone()
			c.Collect(h)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				h.CopyFrom(master)
				b.StartTimer()
				c.Collect(h)
			}
		})
		b.Run(fmt.Sprintf("slots=%d/serial", slots), func(b *testing.B) {
			h := master.Clone()
			bm := mark.NewBitmap(slots)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				h.CopyFrom(master)
				b.StartTimer()
				heap.Collect(h, bm)
			}
		})
	}
}
