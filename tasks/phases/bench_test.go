package phases_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workgang/workgang/tasks/phases"
)

func BenchmarkAdd(b *testing.B) {
	p := phases.New[time.Duration]("Mark", 8)
	b.ReportAllocs()
	for i := range b.N {
		p.Add(i&7, time.Nanosecond)
	}
}

func BenchmarkSet(b *testing.B) {
	p := phases.New[int64]("Marked", 8)
	b.ReportAllocs()
	for i := range b.N {
		if i&7 == 0 {
			p.Reset()
		}
		p.Set(i&7, int64(i))
	}
}

// BenchmarkAddParallel records from GOMAXPROCS goroutines at once, each into
// its own slot, neighbours in adjacent slots: what a slot's padding is for.
// If two slots shared a cache line (or an adjacent-line pair), every Add
// would move the line between the goroutines' processors.
func BenchmarkAddParallel(b *testing.B) {
	p := phases.New[time.Duration]("Mark", runtime.GOMAXPROCS(0))
	var next atomic.Int32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := int(next.Add(1)-1) % runtime.GOMAXPROCS(0)
		for pb.Next() {
			p.Add(w, time.Nanosecond)
		}
	})
}
