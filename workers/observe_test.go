package workers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/spin"
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
	// The policy's view fixed: two processors, no other process waiting
	// (a loaded test machine would rightly stop the spin).
	defer spin.ForceView(2, false)()
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

// The set's goroutines (its workers: a set has no other) carry the set's
// pprof labels and no others: not those of the goroutine whose run started
// them (a request's, say).
func TestWorkerGoroutinesCarryPprofLabels(t *testing.T) {
	w := workers.New("labelled", 2)
	defer w.Close()
	pprof.Do(context.Background(), pprof.Labels("request", "r-7f3a"), func(context.Context) {
		runOnEveryWorker(w, 2) // both workers have started and labelled themselves
	})
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&buf, 1))
	out := buf.String()
	for i := range 2 {
		// The goroutine profile prints labels in a fixed (sorted) order.
		assert.Contains(t, out, fmt.Sprintf(`"workgang.set":"labelled", "workgang.worker":"%d"`, i))
	}
	assert.Equal(t, 2, strings.Count(out, `"workgang.set":"labelled"`), "the set has its workers' goroutines and no other")
	assert.NotContains(t, out, "r-7f3a", "a goroutine of the set kept the labels of the run that started it")
}

func TestPlacementOptionsValidate(t *testing.T) {
	assert.PanicsWithValue(t, "workers: WithAffinity: negative CPU -1", func() { workers.WithAffinity(0, -1) })
	assert.PanicsWithValue(t, "workers: WithNice: nice = 20 out of range [-20, 19]", func() { workers.WithNice(20) })
	assert.PanicsWithValue(t, "workers: WithNice: nice = -21 out of range [-20, 19]", func() { workers.WithNice(-21) })
}

// TestNamePanicWithTracing: with runtime/trace on, the regions call Name on
// every run; a panic there is reported as *PanicError (before anything runs
// if the run's own region fails, as the copy's failure if a copy's region
// fails), and the counts stay right.
func TestNamePanicWithTracing(t *testing.T) {
	require.NoError(t, trace.Start(io.Discard))
	defer trace.Stop()
	w := workers.New("trace-name", 2)
	defer w.Close()
	for _, tc := range []struct {
		caller bool
		n      int
	}{{false, 2}, {true, 2}, {true, 1}} {
		what := fmt.Sprintf("caller=%v n=%d", tc.caller, tc.n)
		before := w.Stats()
		b := &nameBomb{caller: tc.caller}
		pe := capturePanic(t, func() { w.RunN(b, tc.n) })
		assert.Equal(t, "Name", pe.Method, what)
		assert.Equal(t, "name bomb", pe.Value, what)
		for id := range tc.n {
			assert.Zero(t, b.ran[id].Load(), "%s: copy %d ran", what, id)
		}
		after := w.Stats()
		assert.Equal(t, before.Runs, after.Runs, what)
		assert.Equal(t, before.CallerCopies+before.WorkerCopies, after.CallerCopies+after.WorkerCopies, what)

		// Name is asked once per run, for the run's region and every
		// copy's: a Name that would panic on its second call is never
		// called twice, and every copy runs once.
		b = &nameBomb{caller: tc.caller, fail: 2}
		w.RunN(b, tc.n)
		assert.Equal(t, int32(1), b.calls.Load(), "%s: Name calls", what)
		for id := range tc.n {
			assert.Equal(t, int32(1), b.ran[id].Load(), "%s: copy %d", what, id)
		}
		after2 := w.Stats()
		assert.Equal(t, after.Runs+1, after2.Runs, what)
		assert.Equal(t, after.CallerCopies+after.WorkerCopies+uint64(tc.n), after2.CallerCopies+after2.WorkerCopies, what)
	}
	checkUsable(t, w)
}

// TestStatsGoexitOnCallerNotCounted: a caller copy whose caller calls
// runtime.Goexit is not counted, inline runs included; the run is.
func TestStatsGoexitOnCallerNotCounted(t *testing.T) {
	for _, n := range []int{1, 2} {
		w := workers.New("goexit-stats", 2)
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.RunN(tasks.CallerRuns(tasks.Func("exit", func(id int) {
				if id == n-1 { // the caller's copy
					runtime.Goexit()
				}
			})), n)
		}()
		<-done
		st := w.Stats()
		w.Close()
		assert.Equal(t, uint64(1), st.Runs, "n=%d: %v", n, st)
		wantInline := uint64(0)
		if n == 1 {
			wantInline = 1
		}
		assert.Equal(t, wantInline, st.InlineRuns, "n=%d: %v", n, st)
		assert.Zero(t, st.CallerCopies, "n=%d: %v", n, st)
		assert.Equal(t, uint64(n-1), st.WorkerCopies, "n=%d: %v", n, st)
	}
}

// TestNamePanicWithoutTracing: with tracing off Name is called only to
// describe a failure, so a run whose Name panics and whose copies are fine
// returns normally.
func TestNamePanicWithoutTracing(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("tracing is on")
	}
	w := workers.New("no-trace-name", 2)
	defer w.Close()
	for _, n := range []int{1, 2} {
		b := &nameBomb{caller: true}
		w.RunN(b, n)
		for id := range n {
			assert.Equal(t, int32(1), b.ran[id].Load())
		}
	}
}
