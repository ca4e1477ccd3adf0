package claim_test

import (
	"testing"

	"github.com/workgang/workgang/tasks/claim"
)

func BenchmarkSubtasksTryClaim(b *testing.B) {
	s := claim.NewSubtasks(1024)
	b.ReportAllocs()
	for i := range b.N {
		k := i & 1023
		if k == 0 {
			s.Reset()
		}
		s.TryClaim(k)
	}
}

func BenchmarkSequentialNext(b *testing.B) {
	s := claim.NewSequential(1 << 62)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := s.Next(); !ok {
				b.Error("exhausted")
				return
			}
		}
	})
}

func BenchmarkSequentialAll(b *testing.B) {
	s := claim.NewSequential(b.N)
	b.ReportAllocs()
	n := 0
	for range s.All() {
		n++
	}
	if n != b.N {
		b.Fatalf("got %d indices; want %d", n, b.N)
	}
}
