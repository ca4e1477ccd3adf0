package workers_test

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// One behaviour on every machine: what a call does (which indices run, how
// often a body is called, what it panics with) is the same whatever the wait
// policy reads. The views below are what the policy can read: an idle
// machine, one whose CPUs other processes wait for, one processor
// (GOMAXPROCS 1); each with every hint on and with every hint off.

// machineView is one state of the machine, set for a test and undone.
type machineView struct {
	name string
	set  func() (undo func())
}

func machineViews() []machineView {
	forced := func(procs int, contended bool, hints spin.Hint) func() func() {
		return func() func() {
			old := spin.SetHints(hints)
			restore := spin.ForceView(procs, contended)
			return func() { restore(); spin.SetHints(old) }
		}
	}
	var views []machineView
	for _, h := range []struct {
		name  string
		hints spin.Hint
	}{{"all hints", spin.ParseHints("all")}, {"plain", spin.ParseHints("plain")}} {
		views = append(views,
			machineView{"idle/" + h.name, forced(2, false, h.hints)},
			machineView{"contended/" + h.name, forced(2, true, h.hints)},
			machineView{"GOMAXPROCS 1/" + h.name, func() func() {
				old := spin.SetHints(h.hints)
				prev := runtime.GOMAXPROCS(1)
				spin.Refresh()
				return func() { runtime.GOMAXPROCS(prev); spin.Refresh(); spin.SetHints(old) }
			}},
		)
	}
	return views
}

// loopCall is one of the loops, over [0, n), calling fail(i) (which may
// panic or Goexit) for each index i it covers, and recording each body
// call's [lo, hi).
type loopCall struct {
	name string
	// each: one call per index (Do, RunContext), so a failure names the i.
	each bool
	run  func(w *workers.Workers, n int, fail func(i int), calls *chunkLog)
}

func loopCalls() []loopCall {
	over := func(lo, hi int, fail func(int)) {
		for i := lo; i < hi; i++ {
			fail(i)
		}
	}
	return []loopCall{
		{"ForRange", false, func(w *workers.Workers, n int, fail func(int), calls *chunkLog) {
			w.ForRange(n, func(_, lo, hi int) { calls.add(lo, hi); over(lo, hi, fail) }, workers.WithChunk(1))
		}},
		{"ForChunks", false, func(w *workers.Workers, n int, fail func(int), calls *chunkLog) {
			w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
				for lo, hi := range chunks {
					calls.add(lo, hi)
					over(lo, hi, fail)
				}
			}, workers.WithChunk(1))
		}},
		{"Do", true, func(w *workers.Workers, n int, fail func(int), calls *chunkLog) {
			w.Do(n, func(i int) { calls.add(i, i+1); fail(i) })
		}},
		{"RunContext", true, func(w *workers.Workers, n int, fail func(int), calls *chunkLog) {
			_ = w.RunContext(context.Background(), n, func(_ context.Context, i int) error {
				calls.add(i, i+1)
				fail(i)
				return nil
			})
		}},
	}
}

// TestLoopsRunEveryIndexOnEveryMachine: whatever one body call does (panic,
// Goexit) and whatever the machine looks like, every index runs once, and a
// panic comes back as a *PanicError with its value, the failed i for the
// calls that have one, and every failed call counted.
func TestLoopsRunEveryIndexOnEveryMachine(t *testing.T) {
	const n = 8
	for _, view := range machineViews() {
		for _, lc := range loopCalls() {
			for _, failure := range []struct {
				name  string
				at    map[int]bool
				exit  bool
				value string
			}{
				{"panic at 0", map[int]bool{0: true}, false, "boom 0"},
				{"panic at the last", map[int]bool{n - 1: true}, false, fmt.Sprintf("boom %d", n-1)},
				{"panic everywhere", nil, false, ""},
				{"Goexit at 0", map[int]bool{0: true}, true, ""},
			} {
				t.Run(view.name+"/"+lc.name+"/"+failure.name, func(t *testing.T) {
					undo := view.set()
					defer undo()
					w := workers.New("machine", 4)
					defer w.Close()
					var calls chunkLog
					fails := func(i int) bool { return failure.at == nil || failure.at[i] }
					o := testutil.Call(func() {
						lc.run(w, n, func(i int) {
							switch {
							case !fails(i):
							case failure.exit:
								runtime.Goexit()
							default:
								panic(fmt.Sprintf("boom %d", i))
							}
						}, &calls)
					})
					require.NoError(t, calls.coversOnce(n), "indices")
					if failure.exit {
						// A Goexit goes on where it happened: on the caller it
						// ends the call's goroutine, on a worker the call
						// reports it.
						if !o.Goexit {
							pe, ok := o.Value.(*workers.PanicError)
							require.True(t, ok, "got %+v; want a Goexit or a *PanicError", o)
							assert.True(t, pe.Goexit, "%v", pe)
						}
						return
					}
					pe, ok := o.Value.(*workers.PanicError)
					require.True(t, ok, "got %+v; want a *PanicError", o)
					failed := n
					if failure.at != nil {
						failed = len(failure.at)
						assert.Equal(t, failure.value, pe.Value, "the first panic's value")
					}
					assert.Equal(t, failed, pe.Panics, "every failed call counted")
					if lc.each {
						assert.Equal(t, fmt.Sprintf("boom %d", pe.Worker), pe.Value, "the PanicError names the failed i")
					}
				})
			}
		}
	}
}

// A loop run by one goroutine calls its body once with the default schedule,
// as serial code would: at GOMAXPROCS 1, with WithCopies(1), and on a set
// with concurrent runs that another run holds; with more copies, ForChunks
// calls its body at most once per copy.
func TestBodyCallsOnEveryMachine(t *testing.T) {
	const n = 1000
	count := func(w *workers.Workers, opts ...workers.RangeOption) (forRange, forChunks int) {
		var calls, bodies atomic.Int32
		w.ForRange(n, func(int, int, int) { calls.Add(1) }, opts...)
		w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
			bodies.Add(1)
			for range chunks {
			}
		}, opts...)
		return int(calls.Load()), int(bodies.Load())
	}
	for _, view := range machineViews() {
		t.Run(view.name, func(t *testing.T) {
			undo := view.set()
			defer undo()
			w := workers.New("bodies", 4, workers.WithConcurrentRuns())
			defer w.Close()
			r, c := count(w, workers.WithCopies(1))
			assert.Equal(t, [2]int{1, 1}, [2]int{r, c}, "one copy: one body call each")
			_, c = count(w)
			assert.LessOrEqual(t, c, w.ActiveWorkers(), "ForChunks: at most one body call per copy")
			release := holdSet(w, 2)
			r, c = count(w)
			release()
			assert.Equal(t, [2]int{1, 1}, [2]int{r, c}, "a busy set: one copy, one body call each")
		})
	}
	prev := runtime.GOMAXPROCS(1)
	defer func() { runtime.GOMAXPROCS(prev); spin.Refresh() }()
	spin.Refresh()
	w := workers.New("bodies-1", 4)
	defer w.Close()
	r, c := count(w)
	assert.Equal(t, [2]int{1, 1}, [2]int{r, c}, "GOMAXPROCS 1: one copy, one body call each")
}

// A loop's copies are offered to the workers whatever the load: the copies
// a loop plans depend on ActiveWorkers and GOMAXPROCS only, so a caller-runs
// loop under a contended view is offered (not run inline, not cut) exactly
// as under an idle one.
func TestLoopCopiesIgnoreTheLoad(t *testing.T) {
	for _, view := range machineViews()[:2] { // idle, contended
		t.Run(view.name, func(t *testing.T) {
			undo := view.set()
			defer undo()
			w := workers.New("offered", 2)
			defer w.Close()
			before := w.Stats()
			w.ForRange(64, func(int, int, int) {}, workers.WithChunk(1))
			after := w.Stats()
			if runtime.GOMAXPROCS(0) == 1 {
				assert.Equal(t, before.CappedLoops+1, after.CappedLoops, "GOMAXPROCS 1 cuts the copies: %v", after)
				assert.Equal(t, before.InlineRuns+1, after.InlineRuns, "one copy: inline: %v", after)
				return
			}
			assert.Equal(t, before.CappedLoops, after.CappedLoops, "not cut: %v", after)
			assert.Equal(t, before.InlineRuns, after.InlineRuns, "offered to the workers, not run alone: %v", after)
			assert.Equal(t, before.Runs+1, after.Runs, "%v", after)
		})
	}
}

// Stats says why a run's copies ran on its caller: GOMAXPROCS cut a loop's
// copies, the set was busy, or the caller ran every copy it offered before
// a worker claimed one (at GOMAXPROCS 1 a woken worker cannot run until the
// caller waits).
func TestStatsSayWhyRunsRanOnTheCaller(t *testing.T) {
	w := workers.New("why", 2, workers.WithConcurrentRuns())
	defer w.Close()
	w.SetActiveWorkers(2)
	func() {
		prev := runtime.GOMAXPROCS(1)
		defer func() { runtime.GOMAXPROCS(prev); spin.Refresh() }()
		spin.Refresh()
		before := w.Stats()
		w.ForRange(64, func(int, int, int) {})
		after := w.Stats()
		assert.Equal(t, before.CappedLoops+1, after.CappedLoops, "%v", after)
		assert.Equal(t, before.InlineRuns+1, after.InlineRuns, "%v", after)
		before = after
		w.RunN(tasks.CallerRuns(tasks.Func("two", func(int) {})), 2)
		after = w.Stats()
		assert.Equal(t, before.CallerOnlyRuns+1, after.CallerOnlyRuns, "%v", after)
	}()
	release := holdSet(w, 2)
	before := w.Stats()
	w.Do(10, func(int) {})
	after := w.Stats()
	release()
	assert.Equal(t, before.BusyRuns+1, after.BusyRuns, "%v", after)
	assert.Equal(t, before.CallerCopies+1, after.CallerCopies, "a busy loop is one copy: %v", after)
	assert.Contains(t, after.String(), "caller_only=")
}

// coversOnce reports an error unless the recorded calls cover [0, n), each
// index once.
func (c *chunkLog) coversOnce(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	hits := make([]int, n)
	for _, r := range c.calls {
		for i := r[0]; i < r[1]; i++ {
			if i < 0 || i >= n {
				return fmt.Errorf("index %d outside [0, %d)", i, n)
			}
			hits[i]++
		}
	}
	for i, h := range hits {
		if h != 1 {
			return fmt.Errorf("index %d ran %d times; want 1 (calls %v)", i, h, c.calls)
		}
	}
	return nil
}
