package workers_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// parallelisms returns min, half and full parallelism for this machine.
func parallelisms() []int {
	full := runtime.GOMAXPROCS(0)
	ns := []int{1}
	if h := full / 2; h > 1 {
		ns = append(ns, h)
	}
	if full > 1 {
		ns = append(ns, full)
	}
	return ns
}

// BenchmarkRun measures one Run of an empty task: the dispatch round trip.
func BenchmarkRun(b *testing.B) {
	empty := tasks.Func("empty", func(int) {})
	for _, n := range parallelisms() {
		for _, caller := range []bool{false, true} {
			name := fmt.Sprintf("n=%d/workers", n)
			t := empty
			if caller {
				name = fmt.Sprintf("n=%d/workers+caller", n)
				t = tasks.CallerRuns(empty)
			}
			b.Run(name, func(b *testing.B) {
				w := workers.New("bench", n)
				defer w.Close()
				w.RunN(t, n) // create the workers outside the timed loop
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					w.RunN(t, n)
				}
			})
		}
	}
}

// BenchmarkWaitGroup is the baseline every Go program has: n goroutines per
// phase and a sync.WaitGroup.
func BenchmarkWaitGroup(b *testing.B) {
	for _, n := range parallelisms() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var wg sync.WaitGroup
			for range b.N {
				wg.Add(n)
				for i := range n {
					go func() { _ = i; wg.Done() }()
				}
				wg.Wait()
			}
		})
	}
}
