package phases_test

import (
	"testing"
	"time"

	"github.com/workgang/workgang/tasks/phases"
)

func BenchmarkAdd(b *testing.B) {
	p := phases.NewTimes("Mark", 8)
	b.ReportAllocs()
	for i := range b.N {
		p.Add(i&7, time.Nanosecond)
	}
}

func BenchmarkSet(b *testing.B) {
	p := phases.NewCounts("Marked", 8)
	b.ReportAllocs()
	for i := range b.N {
		if i&7 == 0 {
			p.Reset()
		}
		p.Set(i&7, int64(i))
	}
}
