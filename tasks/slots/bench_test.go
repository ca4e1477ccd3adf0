package slots_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/workgang/workgang/tasks/slots"
)

// sumInto has two goroutines each add b.N values into the int p(worker)
// returns, the way the README's first example summed into a []int.
func sumInto(b *testing.B, p func(worker int) *int) {
	const workers = 2
	var wg sync.WaitGroup
	var ready atomic.Int32
	b.ResetTimer()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sum := p(w)
			// Start together, so the adds overlap in time as far as the
			// scheduler lets them.
			ready.Add(1)
			for ready.Load() < workers {
				runtime.Gosched()
			}
			for i := range b.N {
				*sum += i
			}
		}()
	}
	wg.Wait()
}

// BenchmarkAdjacentVsPadded: two goroutines summing into adjacent ints of a
// []int (one cache line: false sharing) against padded slots. ns/op is the
// time per add of each goroutine; compare the two within one run (needs 2
// free CPUs to show the effect).
func BenchmarkAdjacentVsPadded(b *testing.B) {
	b.Run("adjacent", func(b *testing.B) {
		partial := make([]int, 2)
		sumInto(b, func(w int) *int { return &partial[w] })
	})
	b.Run("padded", func(b *testing.B) {
		s := slots.New[int](2)
		sumInto(b, s.At)
	})
}
