package ranges_test

import (
	"math"
	"testing"
)

// BenchmarkLoopNext is one claim on an uncontended loop.
func BenchmarkLoopNext(b *testing.B) {
	l := newLoop(1<<30, 1)
	b.ReportAllocs()
	for range b.N {
		if _, _, ok := l.Next(); !ok {
			l.Reset(1<<30, 1)
		}
	}
}

// BenchmarkLoopNextContended is claims by GOMAXPROCS goroutines at once.
func BenchmarkLoopNextContended(b *testing.B) {
	l := newLoop(math.MaxInt, 1) // more chunks than any b.N, on either word size
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Next()
		}
	})
}

// BenchmarkGuidedNext is one guided claim (a load and a CAS) on an
// uncontended loop, against BenchmarkLoopNext's one add.
func BenchmarkGuidedNext(b *testing.B) {
	g := newGuided(1<<30, 1<<20, 1)
	b.ReportAllocs()
	for range b.N {
		if _, _, ok := g.Next(); !ok {
			g.ResetGuided(1<<30, 1<<20, 1)
		}
	}
}
