package workers_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
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

// BenchmarkRunParked is BenchmarkRun with spinning off (WithSpin(0)): every
// run wakes parked workers, so it measures the wake-up path (the tree) and
// gives the wake-up cost the scale-up model in docs/perf.md uses.
func BenchmarkRunParked(b *testing.B) {
	empty := tasks.Func("empty", func(int) {})
	for _, n := range parallelisms() {
		b.Run(fmt.Sprintf("n=%d/workers", n), func(b *testing.B) {
			w := workers.New("bench-parked", n, workers.WithSpin(0))
			defer w.Close()
			w.RunN(empty, n)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				w.RunN(empty, n)
			}
		})
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

// spinWork burns about iters*2 ns of CPU in a loop the compiler cannot drop.
//
//go:noinline
func spinWork(iters int) uint64 {
	x := uint64(iters) | 1
	for range iters {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

var sink atomic.Uint64

// BenchmarkGrain runs phases of real work split across GOMAXPROCS copies:
// how much of the ideal speedup a run keeps when copies are short. Compare
// the ns/op of each row with the serial row.
func BenchmarkGrain(b *testing.B) {
	n := runtime.GOMAXPROCS(0)
	for _, total := range []int{5000, 20000, 100000} { // xorshift steps per phase
		work := tasks.Func("work", func(int) { sink.Add(spinWork(total / n)) })
		b.Run(fmt.Sprintf("steps=%d/serial", total), func(b *testing.B) {
			for range b.N {
				for range n {
					sink.Add(spinWork(total / n))
				}
			}
		})
		for _, caller := range []bool{false, true} {
			t, mode := work, "workers"
			if caller {
				t, mode = tasks.CallerRuns(work), "workers+caller"
			}
			b.Run(fmt.Sprintf("steps=%d/%s", total, mode), func(b *testing.B) {
				w := workers.New("grain", n)
				defer w.Close()
				w.RunN(t, n)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					w.RunN(t, n)
				}
			})
		}
	}
}

// BenchmarkBarrier measures one barrier among the members of a team: one
// RunTeam whose members pass b.N barriers (EPCC's BARRIER, without the
// delay), at full parallelism.
func BenchmarkBarrier(b *testing.B) {
	n := runtime.GOMAXPROCS(0)
	w := workers.New("bench-barrier", n)
	defer w.Close()
	w.RunTeam("warm", n, func(m *team.Member) { m.Barrier() })
	b.ReportAllocs()
	b.ResetTimer()
	w.RunTeam("barrier", n, func(m *team.Member) {
		for range b.N {
			m.Barrier()
		}
	})
}

// BenchmarkTeamFor measures a worksharing loop of 256 empty iterations inside
// one run (EPCC's FOR inside a parallel region: the schedule's claims plus the
// loop's closing barrier), per schedule, at full parallelism.
func BenchmarkTeamFor(b *testing.B) {
	n := runtime.GOMAXPROCS(0)
	body := func(lo, hi int) {} // a call through a func value: not elided
	for _, sc := range []struct {
		name  string
		sched team.Schedule
	}{{"static", team.Static()}, {"dynamic,1", team.Dynamic(1)}, {"dynamic,8", team.Dynamic(8)}, {"guided,1", team.Guided(1)}} {
		b.Run(sc.name, func(b *testing.B) {
			w := workers.New("bench-teamfor", n)
			defer w.Close()
			w.RunTeam("warm", n, func(m *team.Member) { m.Barrier() })
			b.ReportAllocs()
			b.ResetTimer()
			w.RunTeam("for", n, func(m *team.Member) {
				for range b.N {
					m.For(256, body, sc.sched)
				}
			})
		})
	}
}
