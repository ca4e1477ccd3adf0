package workers_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/ranges"
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

// BenchmarkForRangeChunk1 is one copy of ForRange over 1024 chunks of one
// iteration each, on its caller: what a chunk costs (a claim, the per-chunk
// checks, a body call), reported as ns/chunk. CI compares it across builds
// (.ci/run: the default, -tags purego, GOARCH=386), where the portable
// paths must not make a chunk much dearer.
func BenchmarkForRangeChunk1(b *testing.B) {
	const chunks = 1024
	w := workers.New("bench-chunk1", 1)
	defer w.Close()
	var sink int
	body := func(_, lo, hi int) { sink += hi - lo } // one copy: one goroutine
	w.ForRange(chunks, body, workers.WithChunk(1))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.ForRange(chunks, body, workers.WithChunk(1))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
	if sink != (b.N+1)*chunks {
		b.Fatalf("%d iterations ran; want %d", sink, (b.N+1)*chunks)
	}
}

// BenchmarkForRangeSkew runs a loop of 256 iterations whose work is even
// (uniform) or sits in its first eighth (front), with the default schedule
// and with WithGuided at the default chunk: the default keeps a front-heavy
// loop's speedup because its chunks split the heavy eighth across copies;
// a guided loop's first claim takes a quarter of the iterations (with 2
// copies), the heavy part with it. Compare each row with its serial row.
func BenchmarkForRangeSkew(b *testing.B) {
	const n = 256
	w := workers.New("skew", runtime.GOMAXPROCS(0))
	defer w.Close()
	for _, shape := range []struct {
		name  string
		steps func(i int) int
	}{
		{"uniform", func(int) int { return 800 }},
		{"front", func(i int) int { // 80% of the work in the first eighth
			if i < n/8 {
				return 5600
			}
			return 200
		}},
	} {
		body := func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				sink.Add(spinWork(shape.steps(i)))
			}
		}
		b.Run(shape.name+"/serial", func(b *testing.B) {
			for range b.N {
				body(0, 0, n)
			}
		})
		guided := workers.WithGuided(ranges.ChunkSize(n, w.MaxWorkers()))
		for _, s := range []struct {
			name string
			opts []workers.RangeOption
		}{{"default", nil}, {"guided", []workers.RangeOption{guided}}} {
			b.Run(shape.name+"/"+s.name, func(b *testing.B) {
				for range b.N {
					w.ForRange(n, body, s.opts...)
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

// burnCPU starts k goroutines that spin until the returned stop is called:
// a process whose other goroutines keep every processor busy.
func burnCPU(k int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for !done.Load() {
				x = spinWork(1000) ^ x
			}
			sink.Add(x)
		}()
	}
	return func() {
		done.Store(true)
		wg.Wait()
	}
}

// BenchmarkRunContextBlocking is RunContext with copies that block instead
// of computing: 8 copies that each sleep 5 ms, alone and while two other
// goroutines burn CPU, on a set of 8 workers (default spin and WithSpin(0))
// and on a set of GOMAXPROCS, against a goroutine per copy (what errgroup
// does). Copies that wait concurrently take 5 ms in all; copies run one
// after another take 40 ms.
func BenchmarkRunContextBlocking(b *testing.B) {
	const copies, wait = 8, 5 * time.Millisecond
	fn := func(context.Context, int) error {
		time.Sleep(wait)
		return nil
	}
	for _, burners := range []int{0, 2} {
		for _, impl := range []string{"set=8", "set=8/spin=0", "set=GOMAXPROCS", "goroutines"} {
			b.Run(fmt.Sprintf("burners=%d/%s", burners, impl), func(b *testing.B) {
				var w *workers.Workers
				switch impl {
				case "set=8":
					w = workers.New("blocking", copies)
				case "set=8/spin=0":
					w = workers.New("blocking", copies, workers.WithSpin(0))
				case "set=GOMAXPROCS":
					w = workers.New("blocking", runtime.GOMAXPROCS(0))
				}
				if w != nil {
					defer w.Close()
					_ = w.RunContext(context.Background(), copies, func(context.Context, int) error { return nil })
				}
				stop := burnCPU(burners)
				defer stop()
				b.ResetTimer()
				for range b.N {
					if w != nil {
						_ = w.RunContext(context.Background(), copies, fn)
						continue
					}
					var wg sync.WaitGroup
					for id := range copies {
						wg.Add(1)
						go func() {
							defer wg.Done()
							_ = fn(context.Background(), id)
						}()
					}
					wg.Wait()
				}
			})
		}
	}
}

// BenchmarkNewClose is the fixed cost of a set that never runs: New and
// Close of a set of GOMAXPROCS workers (none is created). Every set joins the
// cycle check's registry in New and leaves it in Close.
func BenchmarkNewClose(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		workers.New("bench", runtime.GOMAXPROCS(0)).Close()
	}
}

// BenchmarkBusyRun measures a ForRange of 8 chunks of 20 µs of CPU each on a
// concurrent set of 4 whose run lock another goroutine holds with a plain
// run of one copy that waits (it takes worker 0 but no CPU): "side" is the
// busy run as it runs, in the side slot with idle workers taking chunks;
// "serial" is the same with the side slot held by a third goroutine's busy
// run, so every chunk runs on the caller. On more than one CPU, side should
// be faster by up to the number of CPUs.
func BenchmarkBusyRun(b *testing.B) {
	for _, mode := range []string{"side", "serial"} {
		b.Run(mode, func(b *testing.B) {
			w := workers.New("busy-bench", 4, workers.WithConcurrentRuns())
			defer w.Close()
			w.RunN(tasks.Func("create", func(int) {}), 4) // every worker exists
			release := make(chan struct{})
			var held sync.WaitGroup
			held.Add(1)
			holding := make(chan struct{})
			go func() {
				defer held.Done()
				w.RunN(tasks.Func("hold", func(int) { close(holding); <-release }), 1)
			}()
			<-holding
			if mode == "serial" {
				// A busy run whose first copy waits: it holds the side
				// slot; a worker or its caller runs its second copy.
				var in sync.WaitGroup
				in.Add(1)
				held.Add(1)
				go func() {
					defer held.Done()
					w.ForRange(2, func(_, lo, _ int) {
						if lo == 0 {
							in.Done()
							<-release
						}
					}, workers.WithChunk(1))
				}()
				in.Wait()
			}
			body := func(_, lo, hi int) {
				for start := time.Now(); time.Since(start) < time.Duration(hi-lo)*20*time.Microsecond; {
				}
			}
			b.ResetTimer()
			for range b.N {
				w.ForRange(8, body, workers.WithChunk(1))
			}
			b.StopTimer()
			st := w.Stats()
			b.ReportMetric(float64(st.WorkerCopies)/float64(b.N), "workercopies/op")
			close(release)
			held.Wait()
		})
	}
}

// BenchmarkRunContext measures one RunContext (and ForRangeContext) of empty
// copies on a warm set: the dispatch plus the run's context (see
// TestContextAllocations for its allocations); "done" has each copy ask for
// Done; "fail" has copy 0 return a sentinel error that cancels the others,
// which poll Err. Compare with BenchmarkRun's workers+caller case for the context's
// cost.
func BenchmarkRunContext(b *testing.B) {
	bg := context.Background()
	parent, cancel := context.WithCancel(bg)
	defer cancel()
	empty := func(context.Context, int) error { return nil }
	done := func(ctx context.Context, _ int) error { _ = ctx.Done(); return nil }
	fail := func(ctx context.Context, id int) error {
		if id == 0 {
			return errors.ErrUnsupported
		}
		for ctx.Err() == nil {
			runtime.Gosched()
		}
		return nil
	}
	body := func(context.Context, int, int, int) error { return nil }
	for _, n := range parallelisms() {
		cases := []ctxCase{
			{"empty", func(w *workers.Workers) { _ = w.RunContext(bg, n, empty) }},
			{"empty/cancellable-parent", func(w *workers.Workers) { _ = w.RunContext(parent, n, empty) }},
			{"done", func(w *workers.Workers) { _ = w.RunContext(bg, n, done) }},
			{"fail", func(w *workers.Workers) { _ = w.RunContext(bg, n, fail) }},
			{"ForRangeContext", func(w *workers.Workers) {
				_ = w.ForRangeContext(bg, 64, body, workers.WithCopies(n), workers.WithChunk(1))
			}},
		}
		if n == 1 {
			cases = append(cases[:3], cases[4]) // no "fail": copy 0 is the only one
		}
		benchCtxCases(b, fmt.Sprintf("n=%d", n), n, cases)
	}
}

// ctxCase is one call a context benchmark repeats on a set of n workers.
type ctxCase struct {
	name string
	call func(w *workers.Workers)
}

// benchCtxCases runs each case as the sub-benchmark prefix/name on a warm set
// of n workers.
func benchCtxCases(b *testing.B, prefix string, n int, cases []ctxCase) {
	for _, c := range cases {
		b.Run(prefix+"/"+c.name, func(b *testing.B) {
			w := workers.New("bench-ctx", n)
			defer w.Close()
			c.call(w) // create the workers outside the timed loop
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				c.call(w)
			}
		})
	}
}

// BenchmarkRunContextWork measures RunContext and ForRangeContext whose
// copies (or chunks) each spin for W of CPU, the size of work the calls are
// meant for: the run's context and its cancellation are a fixed cost per
// call, to be weighed against n copies of W.
func BenchmarkRunContextWork(b *testing.B) {
	bg := context.Background()
	parent, cancel := context.WithCancel(bg)
	defer cancel()
	for _, work := range []time.Duration{time.Microsecond, 5 * time.Microsecond} {
		fn := func(context.Context, int) error {
			busyFor(work)
			return nil
		}
		body := func(_ context.Context, _, lo, hi int) error {
			busyFor(time.Duration(hi-lo) * work)
			return nil
		}
		for _, n := range parallelisms() {
			benchCtxCases(b, fmt.Sprintf("W=%v/n=%d", work, n), n, []ctxCase{
				{"RunContext", func(w *workers.Workers) { _ = w.RunContext(bg, n, fn) }},
				{"RunContext/cancellable-parent", func(w *workers.Workers) { _ = w.RunContext(parent, n, fn) }},
				{"ForRangeContext", func(w *workers.Workers) {
					_ = w.ForRangeContext(bg, n, body, workers.WithCopies(n), workers.WithChunk(1))
				}},
			})
		}
	}
}

// busyFor burns d of CPU on the calling goroutine.
func busyFor(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// BenchmarkConcurrentInline is many goroutines (b.RunParallel) each running
// one caller-runs copy inline on one set with concurrent runs, as a server's
// requests do: no lock, but the set's counters and the fields every run reads
// are shared by every goroutine.
func BenchmarkConcurrentInline(b *testing.B) {
	w := workers.New("inline-par", 2, workers.WithConcurrentRuns())
	defer w.Close()
	t := tasks.CallerRuns(tasks.Func("empty", func(int) {}))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.RunN(t, 1)
		}
	})
}
