package claim

import (
	"math"
	"testing"
)

func BenchmarkSubtasksTryClaim(b *testing.B) {
	var s Subtasks
	s.Reset(1024)
	b.ReportAllocs()
	for i := range b.N {
		k := i & 1023
		if k == 0 {
			s.Reset(1024)
		}
		s.TryClaim(k)
	}
}

func BenchmarkSequentialNext(b *testing.B) {
	var s Sequential
	s.Reset(math.MaxInt) // more claims than any b.N, on either word size
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := s.claim(); !ok {
				b.Error("exhausted")
				return
			}
		}
	})
}

func BenchmarkSequentialAll(b *testing.B) {
	var s Sequential
	s.Reset(b.N)
	b.ReportAllocs()
	n := 0
	for range s.All() {
		n++
	}
	if n != b.N {
		b.Fatalf("got %d indices; want %d", n, b.N)
	}
}
