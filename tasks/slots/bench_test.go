package slots_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workgang/workgang/tasks/slots"
)

// threadCPU returns the calling OS thread's CPU time, and false where the
// system offers no per-thread clock (set on Linux by cpuclock_linux_test.go).
var threadCPU = func() (time.Duration, bool) { return 0, false }

// sumInto has two goroutines each add b.N values into the int p(worker)
// returns, the way the README's first example once summed into a []int.
// Besides the wall time it reports cpu-ns/add (on Linux), the CPU time the
// adding threads spent per add: time spent waiting for a CPU (the machine may
// be busy with other work) does not count, cache misses do; and %overlap,
// how much of the two loops ran at the same time, as false sharing costs
// only then.
func sumInto(b *testing.B, p func(worker int) *int) {
	const workers = 2
	var wg sync.WaitGroup
	var ready atomic.Int32
	var cpu atomic.Int64
	var spans [workers][2]time.Time
	b.ResetTimer()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // so the thread CPU clock is this goroutine's
			defer runtime.UnlockOSThread()
			sum := p(w)
			// Start together, so the adds overlap in time as far as the
			// scheduler lets them.
			ready.Add(1)
			for ready.Load() < workers {
				runtime.Gosched()
			}
			start, _ := threadCPU()
			spans[w][0] = time.Now()
			for i := range b.N {
				*sum += i
			}
			spans[w][1] = time.Now()
			if end, ok := threadCPU(); ok {
				cpu.Add(int64(end - start))
			}
		}()
	}
	wg.Wait()
	if _, ok := threadCPU(); ok {
		b.ReportMetric(float64(cpu.Load())/float64(workers*b.N), "cpu-ns/add")
	}
	// How much of the shorter loop ran while the other one did: false
	// sharing can cost only during the overlap.
	lo := spans[0][0]
	if spans[1][0].After(lo) {
		lo = spans[1][0]
	}
	hi := spans[0][1]
	if spans[1][1].Before(hi) {
		hi = spans[1][1]
	}
	shorter := min(spans[0][1].Sub(spans[0][0]), spans[1][1].Sub(spans[1][0]))
	if shorter > 0 {
		b.ReportMetric(100*max(0, float64(hi.Sub(lo)))/float64(shorter), "%overlap")
	}
}

// BenchmarkAdjacentVsPadded: two goroutines summing into adjacent ints of a
// []int (one cache line: false sharing) against padded slots. Compare the
// two within one run; the effect needs the two goroutines to run at the
// same time, on 2 CPUs.
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
