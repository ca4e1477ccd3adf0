package ranges_test

import (
	"testing"

	"github.com/workgang/workgang/tasks/ranges"
)

// BenchmarkLoopNext is one claim on an uncontended loop.
func BenchmarkLoopNext(b *testing.B) {
	l := ranges.NewLoop(1<<30, 1)
	b.ReportAllocs()
	for range b.N {
		if _, _, ok := l.Next(); !ok {
			l.Reset(1<<30, 1)
		}
	}
}

// BenchmarkLoopNextContended is claims by GOMAXPROCS goroutines at once.
func BenchmarkLoopNextContended(b *testing.B) {
	l := ranges.NewLoop(1<<62, 1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Next()
		}
	})
}

// BenchmarkLoopChunks drains a loop of b.N iterations through the iterator,
// one iteration per chunk: the range-over-func overhead per claim.
func BenchmarkLoopChunks(b *testing.B) {
	l := ranges.NewLoop(b.N, 1)
	b.ReportAllocs()
	n := 0
	for lo, hi := range l.Chunks() {
		n += hi - lo
	}
	if n != b.N {
		b.Fatalf("covered %d; want %d", n, b.N)
	}
}

// BenchmarkGuidedNext is one guided claim (a load and a CAS) on an
// uncontended loop, against BenchmarkLoopNext's one add.
func BenchmarkGuidedNext(b *testing.B) {
	g := ranges.NewGuided(1<<30, 1<<20, 1)
	b.ReportAllocs()
	for range b.N {
		if _, _, ok := g.Next(); !ok {
			g.Reset(1<<30, 1<<20, 1)
		}
	}
}
