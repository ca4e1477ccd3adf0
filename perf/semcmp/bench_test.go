package semcmp_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	xsemaphore "golang.org/x/sync/semaphore"

	"github.com/workgang/workgang/semaphore"
)

// The benchmarks compare semaphore.Semaphore with golang.org/x/sync's
// Weighted and a buffered channel, each used as a counting semaphore that
// starts with no permits: signal releases one, wait takes one. Every
// implementation sits behind the same small interface, so each pays the same
// indirect call.
//
//	go test -run '^$' -bench . ./perf/semcmp

// benchSem is a counting semaphore that starts with no permits and never
// holds more than one.
type benchSem interface {
	signal()
	wait()
}

// oursSem adapts semaphore.Semaphore.
type oursSem struct{ s semaphore.Semaphore }

// signal releases a permit.
func (o *oursSem) signal() { o.s.Signal(1) }

// wait takes a permit.
func (o *oursSem) wait() { o.s.Wait() }

// weightedSem adapts x/sync's Weighted of size 1, acquired once at creation so
// that it starts with no permits: Release(1) then signals and Acquire waits.
type weightedSem struct{ w *xsemaphore.Weighted }

// newWeightedSem returns a weightedSem with no permit free.
func newWeightedSem() *weightedSem {
	w := xsemaphore.NewWeighted(1)
	if !w.TryAcquire(1) {
		panic("semaphore_test: fresh Weighted refused TryAcquire(1)")
	}
	return &weightedSem{w}
}

// signal releases a permit.
func (w *weightedSem) signal() { w.w.Release(1) }

// wait takes a permit.
func (w *weightedSem) wait() {
	if err := w.w.Acquire(context.Background(), 1); err != nil {
		panic(err) // Background is never done
	}
}

// chanSem adapts a buffered channel of one slot: a token in the buffer is a
// permit.
type chanSem chan struct{}

// signal releases a permit.
func (c chanSem) signal() { c <- struct{}{} }

// wait takes a permit.
func (c chanSem) wait() { <-c }

// semKinds lists the implementations; workgang-park is semaphore.Semaphore
// with spinning off, so every wait that finds no permit parks at once.
var semKinds = []struct {
	name string
	new  func() benchSem
}{
	{"workgang", func() benchSem { return &oursSem{} }},
	{"workgang-park", func() benchSem {
		o := &oursSem{}
		o.s.SetSpin(0)
		return o
	}},
	{"xsync", func() benchSem { return newWeightedSem() }},
	{"chan", func() benchSem { return make(chanSem, 1) }},
}

// BenchmarkUncontended releases and takes one permit on one goroutine: the
// cost of the fast paths.
func BenchmarkUncontended(b *testing.B) {
	for _, k := range semKinds {
		b.Run(k.name, func(b *testing.B) {
			c := k.new()
			b.ReportAllocs()
			for b.Loop() {
				c.signal()
				c.wait()
			}
		})
	}
}

// BenchmarkTryWait is the failing and succeeding TryWait of semaphore.Semaphore,
// beside x/sync's TryAcquire (channels have no counterpart but a select).
func BenchmarkTryWait(b *testing.B) {
	b.Run("workgang", func(b *testing.B) {
		var s semaphore.Semaphore
		b.ReportAllocs()
		for b.Loop() {
			s.Signal(1)
			if !s.TryWait() || s.TryWait() {
				b.Fatal("TryWait took the wrong number of permits")
			}
		}
	})
	b.Run("xsync", func(b *testing.B) {
		w := xsemaphore.NewWeighted(1)
		b.ReportAllocs()
		for b.Loop() {
			if !w.TryAcquire(1) || w.TryAcquire(1) {
				b.Fatal("TryAcquire took the wrong number of permits")
			}
			w.Release(1)
		}
	})
}

// BenchmarkContended has GOMAXPROCS goroutines pass one permit around: each
// takes it and gives it back, so all but one wait at any time.
func BenchmarkContended(b *testing.B) {
	for _, k := range semKinds {
		b.Run(k.name, func(b *testing.B) {
			c := k.new()
			c.signal() // the one permit
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.wait()
					c.signal()
				}
			})
			c.wait() // leave it empty
		})
	}
}

// BenchmarkHandoff is a round trip between two goroutines through two
// semaphores, the dispatcher's pattern: one signals and waits for the
// other's answer, so every wait finds no permit and must spin or park.
func BenchmarkHandoff(b *testing.B) {
	for _, k := range semKinds {
		b.Run(k.name, func(b *testing.B) {
			ping, pong := k.new(), k.new()
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					ping.wait()
					if stop.Load() {
						return
					}
					pong.signal()
				}
			}()
			b.ReportAllocs()
			for b.Loop() {
				ping.signal()
				pong.wait()
			}
			stop.Store(true) // published to the partner by the signal below
			ping.signal()
			wg.Wait()
		})
	}
}
