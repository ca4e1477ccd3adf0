package workers_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// Inline runs (a caller-runs task with n == 1, run on the caller without
// waking a worker) and copies run on the caller keep the promises of copies
// run on the workers: the run lock, Close from inside a copy, a task that
// panics in Name, and nothing of the task kept after the run. Also the
// helpers the package's panic tests share.

// panicValue runs f and returns what it panicked with (nil if nothing).
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// nestedMessage digs the innermost "workers: ..." message out of a panic
// that may have been wrapped in PanicErrors by each level of nesting.
func nestedMessage(v any) string {
	for {
		pe, ok := v.(*workers.PanicError)
		if !ok {
			return fmt.Sprint(v)
		}
		v = pe.Value
	}
}

// TestInlineRunsNeverOverlap: inline runs (caller-runs, n == 1) take the run
// lock like every run, so copy 0 of two runs never executes at once.
func TestInlineRunsNeverOverlap(t *testing.T) {
	w := workers.New("inline-serial", 2)
	defer w.Close()
	var in atomic.Int32
	var overlaps atomic.Int32
	task := tasks.CallerRuns(tasks.Func("scratch0", func(int) {
		if in.Add(1) != 1 {
			overlaps.Add(1)
		}
		for range 100 {
			runtime.Gosched()
		}
		in.Add(-1)
	}))
	plain := tasks.Func("plain", func(int) {
		if in.Add(1) != 1 {
			overlaps.Add(1)
		}
		runtime.Gosched()
		in.Add(-1)
	})
	testutil.RunCopies(4, func(g int) {
		for range 50 {
			if g == 0 {
				w.RunN(plain, 1)
			} else {
				w.RunN(task, 1)
			}
		}
	})
	assert.Zero(t, overlaps.Load(), "runs overlapped")
}

// TestCloseFromInlineCopyPanics: as documented, Close from inside a task of
// the set panics, inline copies included, and the set stays open.
func TestCloseFromInlineCopyPanics(t *testing.T) {
	w := workers.New("close-inline", 2)
	defer w.Close()
	v := panicValue(func() { w.RunN(tasks.CallerRuns(tasks.Func("closer", func(int) { w.Close() })), 1) })
	require.IsType(t, &workers.PanicError{}, v)
	assert.Contains(t, nestedMessage(v), `workers: Close on "close-inline" called from inside`)
	w.RunN(tasks.Func("still-open", func(int) {}), 2)
}

type nilTask struct{ n int }

func (t *nilTask) Name() string { return fmt.Sprintf("nil-task-%d", t.n) } // panics for a nil *nilTask
func (t *nilTask) Work(int)     { t.n++ }                                  // so does this

// TestTypedNilTask: a typed-nil task pointer panics in Name and in Work; on
// workers, on the caller and inline alike the panic comes back as a
// *PanicError, the process survives and the set stays usable.
func TestTypedNilTask(t *testing.T) {
	w := workers.New("typed-nil", 3)
	defer w.Close()
	var bad *nilTask
	for _, tc := range []struct {
		name string
		task tasks.Task
		n    int
	}{{"workers", bad, 3}, {"caller", tasks.CallerRuns(bad), 3}, {"inline", tasks.CallerRuns(bad), 1}} {
		var v any
		testutil.Within(t, "the runs", 30*time.Second, func() { v = panicValue(func() { w.RunN(tc.task, tc.n) }) })
		require.IsType(t, &workers.PanicError{}, v, tc.name)
		pe := v.(*workers.PanicError)
		assert.Contains(t, pe.Task, "<Name panicked: runtime error: invalid memory address", tc.name)
		assert.Contains(t, fmt.Sprint(pe.Value), "invalid memory address", tc.name)
		w.RunN(tasks.Func("after", func(int) {}), 3)
	}
}

type capturing struct{ big []byte }

func (*capturing) Name() string { return "capturing" }
func (*capturing) Work(int)     {}

// TestFinishedTaskNotRetained: after RunN returns, nothing of the task stays
// reachable from the set (64 MiB captured by a task once survived the run).
func TestFinishedTaskNotRetained(t *testing.T) {
	w := workers.New("retain", 2)
	defer w.Close()
	for _, mode := range []string{"workers", "caller", "inline"} {
		var collected <-chan struct{}
		func() {
			c := &capturing{big: make([]byte, 8<<20)}
			collected = testutil.OnCollect(c)
			switch mode {
			case "workers":
				w.RunN(c, 2)
			case "caller":
				w.RunN(tasks.CallerRuns(c), 2)
			default:
				w.RunN(tasks.CallerRuns(c), 1)
			}
		}()
		assert.True(t, testutil.Collected(collected, time.Second), "%s: the finished task is still reachable", mode)
	}
}
