package workers_test

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

func TestStatsCountRunsAndCopies(t *testing.T) {
	w := workers.New("stats", 3, workers.WithSpin(0))
	defer w.Close()
	empty := tasks.Func("empty", func(int) {})
	caller := tasks.CallerRuns(empty)
	w.RunN(empty, 3)  // 3 worker copies
	w.RunN(caller, 1) // inline
	w.RunN(caller, 1) // inline
	w.RunN(caller, 3) // >= 1 caller copy
	s := w.Stats()
	assert.Equal(t, uint64(4), s.Runs)
	assert.Equal(t, uint64(2), s.InlineRuns)
	assert.Equal(t, uint64(3+1+1+3), s.CallerCopies+s.WorkerCopies, "every copy is counted once: %v", s)
	assert.GreaterOrEqual(t, s.CallerCopies, uint64(3))
	assert.GreaterOrEqual(t, s.WorkerCopies, uint64(3))
	assert.Equal(t, 3, s.Created)
	assert.Contains(t, s.String(), "runs=4 inline=2")
	// With no spin budget, a worker parks as soon as it has seen a run. Let
	// them all get there, then run 3 copies that must all be live at once:
	// every worker had to be woken from park.
	time.Sleep(20 * time.Millisecond)
	var arrived atomic.Int32
	w.RunN(tasks.Func("meet", func(int) {
		arrived.Add(1)
		for arrived.Load() < 3 {
			runtime.Gosched()
		}
	}), 3)
	s = w.Stats()
	assert.Positive(t, s.Parks, "%v", s)
	assert.Positive(t, s.Wakeups, "%v", s)
	assert.LessOrEqual(t, s.Wakeups, s.Parks)
}

func TestStatsSpinHits(t *testing.T) {
	w := workers.New("stats-spin", 1, workers.WithSpin(time.Second))
	defer w.Close()
	empty := tasks.Func("empty", func(int) {})
	for range 200 {
		w.RunN(empty, 1)
	}
	s := w.Stats()
	assert.Equal(t, uint64(200), s.WorkerCopies)
	// The worker spins for up to a second between back-to-back runs, so
	// nearly every copy is found without parking.
	assert.Greater(t, s.Ready+s.Spun, uint64(150), "%v", s)
}

func TestTraceRegionsNamedAfterTask(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("a trace is already running")
	}
	w := workers.New("traced", 2)
	defer w.Close()
	var buf bytes.Buffer
	require.NoError(t, trace.Start(&buf))
	w.RunN(tasks.Func("workgang-trace-probe-7f3a", func(int) {}), 2)
	trace.Stop()
	assert.Contains(t, buf.String(), "workgang-trace-probe-7f3a", "the run's region name is missing from the trace")
}

func TestWorkerGoroutinesCarryPprofLabels(t *testing.T) {
	w := workers.New("labelled", 2)
	defer w.Close()
	runOnEveryWorker(w, 2) // both workers have started and labelled themselves
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&buf, 1))
	out := buf.String()
	for i := range 2 {
		// The goroutine profile prints labels in a fixed (sorted) order.
		assert.Contains(t, out, fmt.Sprintf(`"workgang.set":"labelled", "workgang.worker":"%d"`, i))
	}
}

func TestPlacementOptionsValidate(t *testing.T) {
	assert.PanicsWithValue(t, "workers: WithAffinity: negative CPU -1", func() { workers.WithAffinity(0, -1) })
	assert.PanicsWithValue(t, "workers: WithNice: nice = 20 out of range [-20, 19]", func() { workers.WithNice(20) })
	assert.PanicsWithValue(t, "workers: WithNice: nice = -21 out of range [-20, 19]", func() { workers.WithNice(-21) })
}
