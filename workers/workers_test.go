package workers_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
	"github.com/workgang/workgang/workers"
)

// TestMain checks for leaked goroutines. The tests run unchanged on any
// machine (what a run does never depends on the wait policy's readings).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// probe is a task that records, for each copy, how often it ran and on which
// goroutine.
type probe struct {
	caller bool
	runs   []atomic.Int32
	gs     []atomic.Uint64
}

func newProbe(n int, caller bool) *probe {
	return &probe{caller: caller, runs: make([]atomic.Int32, n), gs: make([]atomic.Uint64, n)}
}
func (p *probe) Name() string       { return "probe" }
func (p *probe) CallerCanRun() bool { return p.caller }
func (p *probe) Work(id int) {
	p.runs[id].Add(1)
	p.gs[id].Store(goid.Get())
}

// check asserts each id ran once and returns how many ran on goroutine g.
func (p *probe) check(t *testing.T, g uint64) (onG int) {
	t.Helper()
	for id := range p.runs {
		if got := p.runs[id].Load(); got != 1 {
			t.Errorf("copy %d ran %d times; want 1", id, got)
		}
		if p.gs[id].Load() == g {
			onG++
		}
	}
	return onG
}

func TestRunNExactCopies(t *testing.T) {
	w := workers.New("exact", 6)
	defer w.Close()
	for _, n := range []int{1, 2, 3, 6} {
		for _, caller := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/caller=%v", n, caller), func(t *testing.T) {
				me := goid.Get()
				for range 300 {
					p := newProbe(n, caller)
					w.RunN(p, n)
					onCaller := p.check(t, me)
					switch {
					case !caller:
						require.Zero(t, onCaller, "a task that did not opt in ran on the caller")
					case n == 1:
						require.Equal(t, 1, onCaller, "n=1 with caller-runs must run inline")
					default:
						require.GreaterOrEqual(t, onCaller, 1, "the caller must keep at least one copy")
					}
				}
			})
		}
	}
	assert.Equal(t, 6, w.ActiveWorkers(), "RunN must leave the active count alone")
}

func TestRunUsesActiveWorkers(t *testing.T) {
	w := workers.New("active", 8, workers.WithActiveWorkers(3))
	defer w.Close()
	assert.Equal(t, 3, w.ActiveWorkers())
	var copies atomic.Int32
	count := tasks.Func("count", func(int) { copies.Add(1) })
	w.Run(count)
	assert.Equal(t, int32(3), copies.Load())
	assert.Equal(t, 5, w.SetActiveWorkers(5))
	assert.Equal(t, 5, w.CreatedWorkers(), "SetActiveWorkers creates what it needs")
	copies.Store(0)
	w.Run(count)
	assert.Equal(t, int32(5), copies.Load())
}

// TestVisibilityAfterRun: every copy's plain writes are visible to the caller
// once RunN returns; the race detector reports a missing edge.
func TestVisibilityAfterRun(t *testing.T) {
	w := workers.New("visible", 4)
	defer w.Close()
	out := make([]int, 4)
	for round := range 200 {
		task := tasks.Func("write", func(id int) { out[id] = round + id })
		if round%2 == 1 {
			task = tasks.CallerRuns(task)
		}
		w.RunN(task, 4)
		for id, v := range out {
			require.Equal(t, round+id, v)
		}
	}
}

func TestCallerInlineWakesNoWorker(t *testing.T) {
	w := workers.New("inline", 4)
	defer w.Close()
	before := runtime.NumGoroutine()
	me := goid.Get()
	var on uint64
	w.RunN(tasks.CallerRuns(tasks.Func("one", func(int) { on = goid.Get() })), 1)
	assert.Equal(t, me, on)
	assert.Zero(t, w.CreatedWorkers(), "an inline run must not create workers")
	assert.Equal(t, before, runtime.NumGoroutine())
}

func TestLazyCreation(t *testing.T) {
	before := runtime.NumGoroutine()
	w := workers.New("lazy", 5)
	assert.Zero(t, w.CreatedWorkers())
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+1, "New may start at most one goroutine")
	task := tasks.Func("noop", func(int) {})
	w.RunN(task, 2)
	assert.Equal(t, 2, w.CreatedWorkers())
	w.RunN(tasks.CallerRuns(task), 3) // the caller runs one: 2 workers are enough
	assert.Equal(t, 2, w.CreatedWorkers())
	w.RunN(task, 4)
	assert.Equal(t, 4, w.CreatedWorkers())
	g := runtime.NumGoroutine()
	for range 100 {
		w.RunN(task, 4)
	}
	// At most g: goroutines of earlier tests may still be finishing their exit.
	assert.LessOrEqual(t, runtime.NumGoroutine(), g, "runs must reuse workers, not start goroutines")
	w.Run(task)
	assert.Equal(t, 5, w.CreatedWorkers())
	assert.LessOrEqual(t, w.CreatedWorkers(), w.MaxWorkers())
	w.Close()
	// Close waits until every worker has called Done; the goroutine itself
	// ends a moment later, so allow it that moment (without starting one).
	for i := 0; i < 5000 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "a worker outlived Close")
}

var errBoom = errors.New("boom")

func TestPanicPropagates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		caller bool
		panics func(id int, onCaller bool) bool
	}{
		{"first copy", 4, false, func(id int, _ bool) bool { return id == 0 }},
		{"last copy", 4, false, func(id int, _ bool) bool { return id == 3 }},
		{"every copy", 4, false, func(int, bool) bool { return true }},
		{"caller copy", 4, true, func(_ int, onCaller bool) bool { return onCaller }},
		{"inline copy", 1, true, func(int, bool) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("panics", 4)
			defer w.Close()
			me := goid.Get()
			var ran atomic.Int32
			task := tasks.Func("boom", func(id int) {
				ran.Add(1)
				if tc.panics(id, goid.Get() == me) {
					panic(fmt.Errorf("copy %d: %w", id, errBoom))
				}
			})
			if tc.caller {
				task = tasks.CallerRuns(task)
			}
			var got any
			func() {
				defer func() { got = recover() }()
				w.RunN(task, tc.n)
			}()
			require.IsType(t, &workers.PanicError{}, got)
			pe := got.(*workers.PanicError)
			assert.ErrorIs(t, pe, errBoom)
			assert.Equal(t, "boom", pe.Task)
			assert.Contains(t, string(pe.Stack), "TestPanicPropagates", "the stack is the panicking copy's")
			assert.Equal(t, int32(tc.n), ran.Load(), "the other copies must run to completion")
			if tc.caller {
				assert.True(t, pe.OnCaller)
			}
			// The set stays usable.
			p := newProbe(4, false)
			w.RunN(p, 4)
			p.check(t, me)
		})
	}
}

func TestGoexitInWorkerCopy(t *testing.T) {
	w := workers.New("goexit", 2)
	defer w.Close()
	assert.PanicsWithError(t, "x", func() {
		defer func() {
			v := recover()
			pe, ok := v.(*workers.PanicError)
			if ok && pe.Goexit {
				panic(errors.New("x"))
			}
			panic(v)
		}()
		w.RunN(tasks.Func("exit", func(id int) {
			if id == 1 {
				runtime.Goexit()
			}
		}), 2)
	})
	assert.Equal(t, 2, w.CreatedWorkers())
	p := newProbe(2, false)
	w.RunN(p, 2) // the replaced worker serves again
	p.check(t, 0)
}

// TestConcurrentRuns: many goroutines run tasks on one set at once; runs are
// serialized and each must see exactly its own copies.
func TestConcurrentRuns(t *testing.T) {
	w := workers.New("shared", 4)
	defer w.Close()
	errs := make(chan error, 8)
	testutil.RunCopies(8, func(g int) {
		for r := range 200 {
			n := 1 + (g+r)%4
			p := newProbe(n, (g+r)%3 == 0)
			w.RunN(p, n)
			for id := range p.runs {
				if got := p.runs[id].Load(); got != 1 {
					errs <- fmt.Errorf("goroutine %d run %d: copy %d ran %d times", g, r, id, got)
					return
				}
			}
		}
	})
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNestedRun(t *testing.T) {
	inner := tasks.Func("inner", func(int) {})
	for _, tc := range []struct {
		name        string
		outerCaller bool
		innerTask   tasks.Task
		innerN      int
		wantPanic   string // "" means the nested run must succeed
	}{
		{"from worker", false, inner, 2, "called from inside a copy running on a worker"},
		{"from caller copy", true, inner, 2, "called from inside a copy of a task that this goroutine is running"},
		// Runs never overlap, inline ones included (issue: copy 0 of two
		// runs at once broke per-worker-id scratch data).
		{"inline nested in worker", false, tasks.CallerRuns(inner), 1, "called from inside a copy running on a worker"},
		{"inline nested in caller copy", true, tasks.CallerRuns(inner), 1, "called from inside a copy of a task that this goroutine is running"},
		{"inline nested in inline", true, tasks.CallerRuns(inner), 1, "called from inside a copy of a task that this goroutine is running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("nest", 2)
			defer w.Close()
			me := goid.Get()
			var nested atomic.Int32
			outer := tasks.Func("outer", func(int) {
				// From a caller copy only the caller nests; from workers, all do.
				if tc.outerCaller && goid.Get() != me {
					return
				}
				nested.Add(1)
				w.RunN(tc.innerTask, tc.innerN)
			})
			if tc.outerCaller {
				outer = tasks.CallerRuns(outer)
			}
			outerN := 2
			if tc.name == "inline nested in inline" {
				outerN = 1
			}
			var got any
			func() {
				defer func() { got = recover() }()
				w.RunN(outer, outerN)
			}()
			assert.Positive(t, nested.Load())
			require.IsType(t, &workers.PanicError{}, got)
			msg := fmt.Sprint(got.(*workers.PanicError).Value)
			assert.Contains(t, msg, "workers: RunN on \"nest\"")
			assert.Contains(t, msg, tc.wantPanic)
		})
	}
}

// TestCloseNestedPanics: Close from inside a copy of the set's run panics,
// on a worker or on the caller, with a message of its own (Close is not a
// run), and the set stays open.
func TestCloseNestedPanics(t *testing.T) {
	const onWorker = `workers: Close on "nest-close" called from inside a copy running on a worker of the same set; Close waits for the run in progress, which would never end; close the set after the run`
	const onCaller = `workers: Close on "nest-close" called from inside a copy of a task that this goroutine is running on the same set; Close waits for the run in progress, which would never end; close the set after the run`
	w := workers.New("nest-close", 2)
	defer w.Close()
	closer := tasks.Func("closer", func(int) { w.Close() })
	for _, tc := range []struct {
		name string
		run  func()
		want string
	}{
		{"worker copy", func() { w.RunN(closer, 2) }, onWorker},
		{"inline copy", func() { w.RunN(tasks.CallerRuns(closer), 1) }, onCaller},
		{"loop body on the caller", func() { w.ForRange(1, func(int, int, int) { w.Close() }) }, onCaller},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pe, ok := panicValue(tc.run).(*workers.PanicError)
			require.True(t, ok, "want a *PanicError")
			assert.Equal(t, tc.want, fmt.Sprint(pe.Value))
			checkUsable(t, w)
		})
	}
}

func TestCloseIdempotentAndFinal(t *testing.T) {
	w := workers.New("closing", 3)
	w.RunN(tasks.Func("x", func(int) {}), 3)
	w.Close()
	w.Close()
	task := tasks.Func("late", func(int) {})
	assert.PanicsWithValue(t, `workers: Run on "closing": set is closed`, func() { w.Run(task) })
	assert.PanicsWithValue(t, `workers: RunN on "closing": set is closed`, func() { w.RunN(task, 2) })
	assert.PanicsWithValue(t, `workers: RunN on "closing": set is closed`, func() { w.RunN(tasks.CallerRuns(task), 1) })
	assert.PanicsWithValue(t, `workers: SetActiveWorkers on "closing": set is closed`, func() { w.SetActiveWorkers(3) })
}

func TestCloseWaitsForRunningRun(t *testing.T) {
	w := workers.New("close-race", 2)
	started := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Int32
	go func() {
		w.RunN(tasks.Func("slow", func(id int) {
			if id == 0 {
				close(started)
			}
			<-release
			finished.Add(1)
		}), 2)
	}()
	<-started
	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a run was in progress")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-closed
	assert.Equal(t, int32(2), finished.Load())
}

func TestMisuse(t *testing.T) {
	w := workers.New("misuse", 4)
	defer w.Close()
	task := tasks.Func("t", func(int) {})
	for _, tc := range []struct {
		name string
		fn   func()
		want string
	}{
		{"New max 0", func() { workers.New("bad", 0) }, `workers: New("bad"): maxWorkers = 0 out of range [1, 65536]`},
		{"New max too big", func() { workers.New("bad", tasks.MaxCopies+1) }, `workers: New("bad"): maxWorkers = 65537 out of range [1, 65536]`},
		{"New nil option", func() { workers.New("bad", 1, nil) }, `workers: New("bad"): option 0 is nil`},
		{"New active 0", func() { workers.New("bad", 2, workers.WithActiveWorkers(0)) }, `workers: New("bad"): WithActiveWorkers(0) out of range [1, 2]`},
		{"New active too big", func() { workers.New("bad", 2, workers.WithActiveWorkers(3)) }, `workers: New("bad"): WithActiveWorkers(3) out of range [1, 2]`},
		{"WithSpin negative", func() { workers.WithSpin(-time.Second) }, `workers: WithSpin: negative spin budget -1s`},
		{"Run nil", func() { w.Run(nil) }, `workers: Run on "misuse": nil task`},
		{"RunN nil", func() { w.RunN(nil, 1) }, `workers: RunN on "misuse": nil task`},
		{"RunN 5", func() { w.RunN(task, 5) }, `workers: RunN on "misuse": n = 5 out of range [0, 4]; for more copies than workers use RunContext (any n) or ForRange`},
		{"RunN -1", func() { w.RunN(task, -1) }, `workers: RunN on "misuse": n = -1 out of range [0, 4]`},
		{"SetActiveWorkers 0", func() { w.SetActiveWorkers(0) }, `workers: SetActiveWorkers on "misuse": n = 0 out of range [1, 4]`},
		{"tasks.Func nil", func() { tasks.Func("f", nil) }, `tasks: Func: nil function for task "f"`},
		{"tasks.CallerRuns nil", func() { tasks.CallerRuns(nil) }, `tasks: CallerRuns: nil task`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.PanicsWithValue(t, tc.want, tc.fn)
		})
	}
	// Misuse must leave the set usable.
	p := newProbe(4, false)
	w.RunN(p, 4)
	p.check(t, 0)
}

// noMethods is a task whose every method fails the test: a run of 0 copies
// must call none.
type noMethods struct{ t *testing.T }

func (n noMethods) Name() string       { n.t.Error("Name called"); return "" }
func (n noMethods) Work(int)           { n.t.Error("Work called") }
func (n noMethods) CallerCanRun() bool { n.t.Error("CallerCanRun called"); return true }

// TestZeroCopiesRunNothing: every run of n = 0 returns having run, called and
// counted nothing, RunN and RunTeam as the loops; on a closed set or with a
// nil task or function they still panic (TestClosedSetPanicsForEveryN).
func TestZeroCopiesRunNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func(t *testing.T, w *workers.Workers)
	}{
		{"RunN", func(t *testing.T, w *workers.Workers) { w.RunN(noMethods{t}, 0) }},
		{"RunTeam", func(t *testing.T, w *workers.Workers) {
			w.RunTeam("t", 0, func(*team.Member) { t.Error("member ran") })
		}},
		{"ForRange", func(t *testing.T, w *workers.Workers) {
			w.ForRange(0, func(int, int, int) { t.Error("body called") })
		}},
		{"Do", func(t *testing.T, w *workers.Workers) { w.Do(0, func(int) { t.Error("fn called") }) }},
		{"RunContext", func(t *testing.T, w *workers.Workers) {
			assert.NoError(t, w.RunContext(ctx, 0, func(context.Context, int) error { t.Error("fn called"); return nil }))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("zero-copies", 2)
			defer w.Close()
			assert.NotPanics(t, func() { tc.call(t, w) })
			assert.Equal(t, workers.Stats{}, w.Stats(), "nothing is counted")
			assert.Zero(t, w.CreatedWorkers())
		})
	}
}

func TestAccessors(t *testing.T) {
	w := workers.New("acc", 3, workers.WithSpin(0))
	defer w.Close()
	assert.Equal(t, "acc", w.Name())
	assert.Equal(t, 3, w.MaxWorkers())
	assert.Equal(t, 3, w.ActiveWorkers())
	assert.Zero(t, w.CreatedWorkers())
	p := newProbe(3, false)
	w.Run(p) // WithSpin(0): every hand-off parks and wakes
	p.check(t, 0)
}

// TestSteadyStateRunAllocatesNothing is requirement 9 as a test; the
// benchmarks report the same with ReportAllocs.
func TestSteadyStateRunAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	w := workers.New("alloc", 2)
	defer w.Close()
	empty := tasks.Func("empty", func(int) {})
	caller := tasks.CallerRuns(empty)
	w.RunN(empty, 2)
	for _, tc := range []struct {
		name string
		t    tasks.Task
		n    int
	}{{"workers n=2", empty, 2}, {"caller n=2", caller, 2}, {"inline n=1", caller, 1}, {"workers n=1", empty, 1}} {
		if a := testing.AllocsPerRun(1000, func() { w.RunN(tc.t, tc.n) }); a != 0 {
			t.Errorf("%s: %v allocs per run; want 0", tc.name, a)
		}
	}
}

// runOnEveryWorker runs n copies that wait at a barrier for each other, so
// that n distinct workers are live at once: when it returns, each of the
// first n workers has started (and done its start-up work, such as
// placement and labels).
func runOnEveryWorker(w *workers.Workers, n int) {
	var arrived atomic.Int32
	w.RunN(tasks.Func("barrier", func(int) {
		arrived.Add(1)
		for arrived.Load() < int32(n) {
			runtime.Gosched()
		}
	}), n)
}

// A zero Workers and a nil *Workers panic, saying which, whichever method
// is called, the observers (Name, Stats...) included.
func TestZeroAndNilSets(t *testing.T) {
	ctx := context.Background()
	calls := map[string]func(w *workers.Workers){
		"Do":        func(w *workers.Workers) { w.Do(1, func(int) {}) },
		"ForRange":  func(w *workers.Workers) { w.ForRange(1, func(int, int, int) {}) },
		"ForChunks": func(w *workers.Workers) { w.ForChunks(1, func(iter.Seq2[int, int]) {}) },
		"ForRangeContext": func(w *workers.Workers) {
			_ = w.ForRangeContext(ctx, 1, func(context.Context, int, int, int) error { return nil })
		},
		"RunContext":       func(w *workers.Workers) { _ = w.RunContext(ctx, 1, func(context.Context, int) error { return nil }) },
		"RunN":             func(w *workers.Workers) { w.RunN(tasks.Func("t", func(int) {}), 1) },
		"Run":              func(w *workers.Workers) { w.Run(tasks.Func("t", func(int) {})) },
		"RunTeam":          func(w *workers.Workers) { w.RunTeam("t", 1, func(*team.Member) {}) },
		"SetActiveWorkers": func(w *workers.Workers) { w.SetActiveWorkers(1) },
		"Close":            func(w *workers.Workers) { w.Close() },
	}
	var zero workers.Workers
	var nilSet *workers.Workers
	for op, call := range calls {
		assert.PanicsWithValue(t, fmt.Sprintf("workers: %s on a zero Workers: make a set with New or Acquire", op),
			func() { call(&zero) }, op)
		assert.PanicsWithValue(t, fmt.Sprintf("workers: %s on a nil *Workers: make a set with New or Acquire", op),
			func() { call(nilSet) }, op)
	}
	// The observers too: a zero Workers has no name or size to report.
	for op, call := range map[string]func(w *workers.Workers){
		"Name": func(w *workers.Workers) { w.Name() }, "MaxWorkers": func(w *workers.Workers) { w.MaxWorkers() },
		"ActiveWorkers": func(w *workers.Workers) { w.ActiveWorkers() }, "CreatedWorkers": func(w *workers.Workers) { w.CreatedWorkers() },
		"Stats": func(w *workers.Workers) { w.Stats() }, "PlacementErrors": func(w *workers.Workers) { w.PlacementErrors() },
	} {
		assert.PanicsWithValue(t, fmt.Sprintf("workers: %s on a zero Workers: make a set with New or Acquire", op),
			func() { call(&zero) }, op)
		assert.PanicsWithValue(t, fmt.Sprintf("workers: %s on a nil *Workers: make a set with New or Acquire", op),
			func() { call(nilSet) }, op)
	}
}

// Every call on a closed set panics, whatever its arguments, n = 0 included:
// Close's doc says later runs panic, and one rule holds for all.
func TestClosedSetPanicsForEveryN(t *testing.T) {
	ctx := context.Background()
	w := workers.New("closed-zero", 2)
	w.Close()
	for op, call := range map[string]func(){
		"Do":              func() { w.Do(0, func(int) {}) },
		"ForRange":        func() { w.ForRange(0, func(int, int, int) {}) },
		"ForChunks":       func() { w.ForChunks(0, func(iter.Seq2[int, int]) {}) },
		"ForRangeContext": func() { _ = w.ForRangeContext(ctx, 0, func(context.Context, int, int, int) error { return nil }) },
		"RunContext":      func() { _ = w.RunContext(ctx, 0, func(context.Context, int) error { return nil }) },
		"RunN":            func() { w.RunN(tasks.Func("t", func(int) {}), 0) },
		"RunTeam":         func() { w.RunTeam("t", 0, func(*team.Member) {}) },
	} {
		assert.PanicsWithValue(t, fmt.Sprintf(`workers: %s on "closed-zero": set is closed`, op), call, op)
	}
}
