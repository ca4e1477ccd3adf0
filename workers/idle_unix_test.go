//go:build unix

package workers_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestIdleSetBurnsNoCPU: after its spin budget, an idle set parks. Over one
// second of idleness the whole process may use only a sliver of CPU; a
// worker that kept spinning would use about a full second per worker.
func TestIdleSetBurnsNoCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a second")
	}
	w := workers.New("idle", 4)
	defer w.Close()
	for range 1000 {
		w.Run(tasks.Func("warm", func(int) {}))
	}
	time.Sleep(50 * time.Millisecond) // let every spin budget (µs) run out
	before := processCPU(t)
	time.Sleep(time.Second)
	used := processCPU(t) - before
	t.Logf("process CPU over 1 s idle: %v", used)
	require.Less(t, used, 100*time.Millisecond, "an idle set is burning CPU")
}

// BenchmarkPhaseGapCPU: what a set's spin budget costs a program whose
// phases come with idle gaps between them: one empty run of ActiveWorkers
// copies every gap, on the default budget and on 50 µs; it reports the
// process's CPU time per phase (cpu-us/phase: the gap's spinning included)
// and the run's own latency (run-us). Run it as
//
//	go test -run '^$' -bench PhaseGapCPU -benchtime 200x ./workers
func BenchmarkPhaseGapCPU(b *testing.B) {
	for _, budget := range []struct {
		name string
		opts []workers.Option
	}{{"default", nil}, {"spin=50us", []workers.Option{workers.WithSpin(50 * time.Microsecond)}}} {
		for _, gap := range []time.Duration{100 * time.Microsecond, 500 * time.Microsecond, 2 * time.Millisecond, 10 * time.Millisecond} {
			b.Run(fmt.Sprintf("%s/gap=%v", budget.name, gap), func(b *testing.B) {
				w := workers.New("gap", runtime.GOMAXPROCS(0), budget.opts...)
				defer w.Close()
				task := tasks.Func("empty", func(int) {})
				w.Run(task)
				var ru syscall.Rusage
				cpu := func() time.Duration {
					if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
						b.Fatal(err)
					}
					return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				}
				var run time.Duration
				b.ResetTimer()
				c0 := cpu()
				for range b.N {
					time.Sleep(gap)
					t0 := time.Now()
					w.Run(task)
					run += time.Since(t0)
				}
				used := cpu() - c0
				b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-us/phase")
				b.ReportMetric(float64(run.Nanoseconds())/1e3/float64(b.N), "run-us")
			})
		}
	}
}
