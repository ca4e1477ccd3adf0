package steal

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkDequePushPop is the owner's fast path: one push and one pop.
func BenchmarkDequePushPop(b *testing.B) {
	var d deque[int]
	d.Push(0) // keep one value below so that Pop never takes the last one
	b.ReportAllocs()
	for i := range b.N {
		d.Push(i)
		d.Pop()
	}
}

// BenchmarkDequePopEmpty is the owner finding its deque empty.
func BenchmarkDequePopEmpty(b *testing.B) {
	var d deque[int]
	b.ReportAllocs()
	for range b.N {
		d.Pop()
	}
}

// BenchmarkDequePushSteal pushes and steals on one goroutine: every value
// reaches the top, so this includes the amortized renewal of the array.
func BenchmarkDequePushSteal(b *testing.B) {
	var d deque[int]
	b.ReportAllocs()
	for i := range b.N {
		d.Push(i)
		d.Steal()
	}
}

// BenchmarkDequeStealContended has one owner pushing and popping while
// GOMAXPROCS-1 thieves steal; ns/op is per owner push.
func BenchmarkDequeStealContended(b *testing.B) {
	var d deque[int]
	var stop atomic.Bool
	var stolen atomic.Int64
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(0)
			for !stop.Load() {
				if _, ok := d.Steal(); ok {
					n++
				}
			}
			stolen.Add(n)
		}()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		d.Push(i)
		if i%2 == 1 {
			d.Pop()
		}
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(stolen.Load())/float64(b.N), "stolen/op")
}

// BenchmarkSetSteal is a best-of-two steal among 8 queues, single-threaded.
func BenchmarkSetSteal(b *testing.B) {
	s := NewSet[int](8)
	for q := 1; q < 8; q++ {
		for i := range 1024 {
			s.Push(q, i)
		}
	}
	b.ReportAllocs()
	for i := range b.N {
		if _, ok := s.steal(0); !ok {
			b.Fatal("empty")
		}
		s.Push(1+i%7, i) // refill as the owners would (same goroutine here)
	}
}

// BenchmarkTerminatorOfferSingle is Offer with one worker: one atomic add.
func BenchmarkTerminatorOfferSingle(b *testing.B) {
	term := NewTerminator(1, func() bool { return false })
	b.ReportAllocs()
	for range b.N {
		term.offer()
		term.Reset()
	}
}

// BenchmarkDrain is a whole stealing phase over a binary tree that starts on
// worker 0; ns/op is per item.
func BenchmarkDrain(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			const items = 1 << 16
			s := NewSet[int](n)
			term := NewTerminator(n, s.HasWork)
			process := func(l *Local[int], v int) {
				w := l.Worker()
				for _, c := range [2]int{2*v + 1, 2*v + 2} {
					if c < items {
						s.Push(w, c)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += items {
				s.Push(0, 0)
				var wg sync.WaitGroup
				for w := 1; w < n; w++ {
					wg.Add(1)
					go func() { defer wg.Done(); s.Drain(w, term, process) }()
				}
				s.Drain(0, term, process)
				wg.Wait()
				term.Reset()
			}
		})
	}
}
