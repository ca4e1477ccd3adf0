package workers_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// runner is what the tests below run on (a *Workers, from New or Acquire).
type runner interface {
	RunN(t tasks.Task, n int)
	ForRange(n int, body func(worker, lo, hi int), opts ...workers.RangeOption)
	RunContext(ctx context.Context, n int, fn func(ctx context.Context, worker int) error) error
	ForRangeContext(ctx context.Context, n int, body func(ctx context.Context, worker, lo, hi int) error, opts ...workers.RangeOption) error
	MaxWorkers() int
	Stats() workers.Stats
}

// submitter is one goroutine's mix of runs on a shared set; it checks every
// run's ids ran exactly once and that plain runs' copies never ran on it.
func submitter(t *testing.T, w runner, g, rounds int) {
	me := goid.Get()
	for r := range rounds {
		n := 1 + (g+r)%3
		switch (g + r) % 5 {
		case 0: // plain: every copy on a worker
			p := newProbe(n, false)
			w.RunN(p, n)
			if on := p.check(t, me); on != 0 {
				t.Errorf("submitter %d: plain run of %d: %d copies on the caller", g, n, on)
			}
		case 1: // caller-runs
			p := newProbe(n, true)
			w.RunN(p, n)
			p.check(t, me)
		case 2:
			hits := make([]atomic.Int32, 100)
			w.ForRange(len(hits), func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			}, workers.WithChunk(1+r%7))
			for i := range hits {
				if got := hits[i].Load(); got != 1 {
					t.Errorf("submitter %d: ForRange iteration %d ran %d times", g, i, got)
				}
			}
		case 3: // more ids than workers
			k := n + w.MaxWorkers()
			ids := make([]atomic.Int32, k)
			require.NoError(t, w.RunContext(context.Background(), k, func(_ context.Context, id int) error {
				ids[id].Add(1)
				return nil
			}))
			for id := range ids {
				if got := ids[id].Load(); got != 1 {
					t.Errorf("submitter %d: RunContext id %d of %d ran %d times", g, id, k, got)
				}
			}
		case 4:
			hits := make([]atomic.Int32, 64)
			require.NoError(t, w.ForRangeContext(context.Background(), len(hits), func(_ context.Context, _, lo, hi int) error {
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
				return nil
			}, workers.WithGuided(2)))
			for i := range hits {
				if got := hits[i].Load(); got != 1 {
					t.Errorf("submitter %d: ForRangeContext iteration %d ran %d times", g, i, got)
				}
			}
		}
	}
}

// Many goroutines share one set: every run's ids run exactly once, plain
// runs stay on the workers, and the counters add up.
func TestConcurrentRunsManySubmitters(t *testing.T) {
	for _, name := range []string{"option", "acquired"} {
		t.Run(name, func(t *testing.T) {
			var w runner
			if name == "option" {
				set := workers.New("many", 3, workers.WithConcurrentRuns())
				defer set.Close()
				w = set
			} else {
				s, release := workers.Acquire("many-shared", 3)
				defer release()
				w = s
			}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					submitter(t, w, g, 150)
				}()
			}
			wg.Wait()
			st := w.Stats()
			assert.Equal(t, st.Runs, uint64(8*150), "%v", st)
			assert.LessOrEqual(t, st.BusyRuns+st.InlineRuns, st.Runs, "%v", st)
			t.Logf("%v", st)
		})
	}
}

// holdSet starts a plain run of n copies on w that blocks until release is
// called; it returns once every copy is running, so the set is busy.
// release waits for the run to return; calling it again does nothing.
func holdSet(w runner, n int) (release func()) {
	var started sync.WaitGroup
	started.Add(n)
	gate := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.RunN(tasks.Func("hold", func(int) {
			started.Done()
			<-gate
		}), n)
	}()
	started.Wait()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(gate)
			<-done
		})
	}
}

// While another goroutine's run holds the set, a caller-runs run runs all
// its copies on its caller instead of waiting, and a plain run waits.
func TestBusyRunsRunOnCaller(t *testing.T) {
	w := workers.New("busy", 2, workers.WithConcurrentRuns())
	defer w.Close()
	release := holdSet(w, 2)
	me := goid.Get()

	p := newProbe(2, true)
	w.RunN(p, 2)
	assert.Equal(t, 2, p.check(t, me), "caller-runs RunN: every copy on the caller")

	var onCaller, calls atomic.Int32
	w.ForRange(100, func(_, _, _ int) {
		calls.Add(1)
		if goid.Get() == me {
			onCaller.Add(1)
		}
	}, workers.WithChunk(1))
	assert.Equal(t, int32(100), calls.Load())
	assert.Equal(t, calls.Load(), onCaller.Load(), "ForRange: every chunk on the caller")

	ids := make([]atomic.Int32, 5)
	require.NoError(t, w.RunContext(context.Background(), 5, func(_ context.Context, id int) error {
		ids[id].Add(1)
		if goid.Get() != me {
			t.Errorf("RunContext id %d off the caller", id)
		}
		return nil
	}))
	for id := range ids {
		assert.Equal(t, int32(1), ids[id].Load(), "RunContext id %d", id)
	}

	one := newProbe(1, true)
	w.RunN(one, 1) // inline, without the lock
	assert.Equal(t, 1, one.check(t, me))

	// A plain run waits for the holder: none of its copies may run before
	// the hold ends.
	plain := newProbe(2, false)
	plainDone := make(chan struct{})
	go func() {
		defer close(plainDone)
		w.RunN(plain, 2)
	}()
	for range 3 { // more busy runs while the plain one waits
		w.RunN(newProbe(2, true), 2)
	}
	for id := range plain.runs {
		assert.Zero(t, plain.runs[id].Load(), "plain copy %d ran while the set was held", id)
	}
	release()
	<-plainDone
	plain.check(t, 0)

	st := w.Stats()
	assert.Equal(t, uint64(6), st.BusyRuns, "%v", st)
	assert.Equal(t, uint64(1), st.InlineRuns, "%v", st)
	assert.Equal(t, uint64(9), st.Runs, "hold, 6 busy, 1 inline, 1 plain: %v", st)
}

// Without WithConcurrentRuns a caller-runs run waits for the holder too.
func TestWithoutOptionCallerRunsWaits(t *testing.T) {
	w := workers.New("serial", 2)
	defer w.Close()
	release := holdSet(w, 2)
	p := newProbe(2, true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.RunN(p, 2)
	}()
	q := newProbe(1, true)
	qDone := make(chan struct{})
	go func() {
		defer close(qDone)
		w.RunN(q, 1)
	}()
	select {
	case <-done:
		t.Fatal("a caller-runs run finished while another run held the set")
	case <-qDone:
		t.Fatal("an inline run finished while another run held the set")
	default:
	}
	release()
	<-done
	<-qDone
	p.check(t, 0)
	q.check(t, 0)
	assert.Zero(t, w.Stats().BusyRuns)
}

// Without the option runs never overlap, whatever their kind: a copy of one
// run never executes while a copy of another does.
func TestWithoutOptionRunsNeverOverlap(t *testing.T) {
	w := workers.New("no-overlap", 2)
	defer w.Close()
	var mu sync.Mutex
	live, liveRun := 0, 0
	overlaps := 0
	enter := func(run int) {
		mu.Lock()
		if live > 0 && liveRun != run {
			overlaps++
		}
		live++
		liveRun = run
		mu.Unlock()
	}
	exit := func() {
		mu.Lock()
		live--
		mu.Unlock()
	}
	var runID atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 100 {
				run := int(runID.Add(1))
				body := func(int) { enter(run); exit() }
				switch (g + r) % 4 {
				case 0:
					w.RunN(tasks.Func("plain", body), 2)
				case 1:
					w.RunN(tasks.CallerRuns(tasks.Func("caller", body)), 1+r%2)
				case 2:
					w.ForRange(50, func(int, int, int) { body(0) }, workers.WithChunk(5))
				case 3:
					_ = w.RunContext(context.Background(), 5, func(context.Context, int) error { body(0); return nil })
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, overlaps, "copies of different runs overlapped")
	assert.Zero(t, w.Stats().BusyRuns)
}

// On a set with WithConcurrentRuns a caller-runs run nested in a copy of
// the same set runs there, every id once, without waiting for the outer run:
// the copy's goroutine (a worker or the caller) runs copy 0 and claims the
// others, which idle workers may take too; a nested plain run still panics
// (it would wait for its own run).
func TestConcurrentNestedRuns(t *testing.T) {
	for _, tc := range []struct {
		name        string
		outerCaller bool
		inner       func(w *workers.Workers, me uint64) error
		wantPanic   string
	}{
		{"caller-runs from worker", false, nestedProbe(2), ""},
		{"caller-runs from caller copy", true, nestedProbe(2), ""},
		{"inline from worker", false, nestedProbe(1), ""},
		{"ForRange from worker", false, nestedForRange, ""},
		{"RunContext from caller copy", true, nestedRunContext, ""},
		{"plain from worker", false, nestedPlain, "called from inside a copy running on a worker"},
		{"plain from caller copy", true, nestedPlain, "called from inside a copy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workers.New("nest-concurrent", 2, workers.WithConcurrentRuns())
			defer w.Close()
			var nested atomic.Int32
			var errs sync.Map
			outer := tasks.Func("outer", func(id int) {
				nested.Add(1)
				if err := tc.inner(w, goid.Get()); err != nil {
					errs.Store(id, err)
				}
			})
			if tc.outerCaller {
				outer = tasks.CallerRuns(outer)
			}
			v := panicValue(func() { w.RunN(outer, 2) })
			assert.Equal(t, int32(2), nested.Load())
			errs.Range(func(k, e any) bool {
				t.Errorf("outer copy %v: %v", k, e)
				return true
			})
			if tc.wantPanic == "" {
				assert.Nil(t, v, "%s", nestedMessage(v))
				return
			}
			require.IsType(t, &workers.PanicError{}, v)
			assert.Contains(t, nestedMessage(v), `workers: RunN on "nest-concurrent"`)
			assert.Contains(t, nestedMessage(v), tc.wantPanic)
		})
	}
}

// nestedProbe runs n copies of a caller-runs probe and checks they all ran,
// on the goroutine of the copy that started them.
func nestedProbe(n int) func(w *workers.Workers, me uint64) error {
	return func(w *workers.Workers, me uint64) error {
		p := newProbe(n, true)
		w.RunN(p, n)
		for id := range p.runs {
			if p.runs[id].Load() != 1 {
				return fmt.Errorf("nested copy %d: ran %d times", id, p.runs[id].Load())
			}
		}
		if p.gs[0].Load() != me {
			return fmt.Errorf("nested copy 0 did not run on the copy's goroutine")
		}
		return nil
	}
}

func nestedForRange(w *workers.Workers, me uint64) error {
	var sum, on atomic.Int64
	w.ForRange(1000, func(_, lo, hi int) {
		sum.Add(int64(hi - lo))
		if goid.Get() == me {
			on.Add(1)
		}
	})
	if sum.Load() != 1000 || on.Load() == 0 {
		return fmt.Errorf("nested ForRange: %d iterations, %d chunks on the copy's goroutine", sum.Load(), on.Load())
	}
	return nil
}

func nestedRunContext(w *workers.Workers, me uint64) error {
	var ran atomic.Int64
	stop := errors.New("stop")
	err := w.RunContext(context.Background(), 7, func(_ context.Context, id int) error {
		ran.Add(1 << (4 * id))
		if id == 6 {
			return stop
		}
		return nil
	})
	if err != stop || ran.Load() != 0x1111111 {
		return fmt.Errorf("nested RunContext: err %v, ran %x", err, ran.Load())
	}
	return nil
}

func nestedPlain(w *workers.Workers, _ uint64) error {
	w.RunN(tasks.Func("inner", func(int) {}), 2)
	return nil
}

// A copy's panic in a busy run does not stop the other copies; the first is
// re-raised with the count; the set stays usable.
func TestBusyRunPanic(t *testing.T) {
	w := workers.New("busy-panic", 4, workers.WithConcurrentRuns())
	defer w.Close()
	release := holdSet(w, 4)
	defer release()
	var ran atomic.Int32
	v := panicValue(func() {
		w.RunN(tasks.CallerRuns(tasks.Func("boom", func(id int) {
			ran.Add(1)
			if id%2 == 1 {
				panic(fmt.Sprint("boom ", id))
			}
		})), 4)
	})
	require.IsType(t, &workers.PanicError{}, v)
	pe := v.(*workers.PanicError)
	assert.Equal(t, int32(4), ran.Load(), "every copy ran")
	assert.Equal(t, "boom 1", pe.Value)
	assert.Equal(t, 1, pe.Worker)
	assert.True(t, pe.OnCaller)
	assert.Equal(t, 2, pe.Panics)
	assert.Equal(t, "boom", pe.Task)
	p := newProbe(2, true)
	w.RunN(p, 2)
	p.check(t, 0)
}

// A goroutine's runs never overlap each other: every copy of one run has
// returned before a copy of its next run starts, on a shared set too.
func TestOneGoroutinesRunsInOrder(t *testing.T) {
	w := workers.New("order", 2, workers.WithConcurrentRuns())
	defer w.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var live atomic.Int32 // copies of this goroutine's current run
			last := -1
			var mu sync.Mutex
			for r := range 200 {
				body := func(int) {
					live.Add(1)
					mu.Lock()
					if last > r {
						t.Errorf("goroutine %d: a copy of run %d after run %d", g, r, last)
					}
					last = r
					mu.Unlock()
					live.Add(-1)
				}
				var task tasks.Task = tasks.Func("order", body)
				if r%2 == 1 {
					task = tasks.CallerRuns(task)
				}
				w.RunN(task, 2)
				if l := live.Load(); l != 0 {
					t.Errorf("goroutine %d: run %d returned with %d copies running", g, r, l)
				}
			}
		}()
	}
	wg.Wait()
}

// RunContext takes any n >= 1: each id once, at most min(n, MaxWorkers)
// copies at a time.
func TestRunContextAnyN(t *testing.T) {
	for _, max := range []int{1, 2, 3} {
		w := workers.New("any-n", max)
		for _, n := range []int{1, max, max + 1, 2*max + 1, 100, 1000} {
			ids := make([]atomic.Int32, n)
			var live, peak atomic.Int32
			err := w.RunContext(context.Background(), n, func(_ context.Context, id int) error {
				l := live.Add(1)
				for {
					p := peak.Load()
					if l <= p || peak.CompareAndSwap(p, l) {
						break
					}
				}
				ids[id].Add(1)
				live.Add(-1)
				return nil
			})
			require.NoError(t, err)
			for id := range ids {
				require.Equal(t, int32(1), ids[id].Load(), "max %d, n %d: id %d", max, n, id)
			}
			assert.LessOrEqual(t, int(peak.Load()), min(n, max), "max %d, n %d: copies at once", max, n)
		}
		w.Close()
	}
}

// With more ids than workers the first error is returned and every id
// still runs (seeing a cancelled context once the error is recorded), and a
// panic names the id that panicked.
func TestRunContextAnyNErrorsAndPanics(t *testing.T) {
	w := workers.New("any-n-err", 2)
	defer w.Close()
	bad := errors.New("bad")
	var ran atomic.Int32
	var sawCancel atomic.Bool
	err := w.RunContext(context.Background(), 50, func(ctx context.Context, id int) error {
		ran.Add(1)
		if id == 0 {
			return bad
		}
		if ctx.Err() != nil {
			sawCancel.Store(true)
		}
		return nil
	})
	assert.Equal(t, bad, err)
	assert.Equal(t, int32(50), ran.Load(), "every id runs")
	t.Logf("a later id saw the cancelled context: %v", sawCancel.Load())

	for _, bad := range []int{0, 1, 2, 17, 49} {
		pe := capturePanic(t, func() {
			_ = w.RunContext(context.Background(), 50, func(_ context.Context, id int) error {
				if id == bad {
					panic("boom")
				}
				return nil
			})
		})
		assert.Equal(t, bad, pe.Worker, "the panicking id")
		assert.Equal(t, "boom", pe.Value)
	}
	require.NoError(t, w.RunContext(context.Background(), 9, func(context.Context, int) error { return nil }))
}

// Sets from Acquire always have concurrent runs.
func TestAcquiredSetsHaveConcurrentRuns(t *testing.T) {
	s, release := workers.Acquire("acquired-busy", 2)
	defer release()
	unhold := holdSet(s, 2)
	me := goid.Get()
	p := newProbe(2, true)
	s.RunN(p, 2) // would wait for the hold without concurrent runs
	assert.Equal(t, 2, p.check(t, me))
	unhold()
	assert.Equal(t, uint64(1), s.Stats().BusyRuns)
}

// A copy's runtime.Goexit in a busy run: the later copies still run, then
// the Goexit proceeds, or, if a copy panicked, that panic is raised instead.
func TestBusyRunGoexit(t *testing.T) {
	w := workers.New("busy-goexit", 3, workers.WithConcurrentRuns())
	defer w.Close()
	release := holdSet(w, 3)
	defer release()
	for _, panicking := range []bool{false, true} {
		var ran [3]atomic.Int32
		task := tasks.CallerRuns(tasks.Func("exit", func(id int) {
			ran[id].Add(1)
			switch {
			case id == 0:
				runtime.Goexit()
			case id == 2 && panicking:
				panic("late boom")
			}
		}))
		var v any
		exited := true
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { v = recover() }()
			w.RunN(task, 3)
			exited = false
		}()
		<-done
		for id := range ran {
			assert.Equal(t, int32(1), ran[id].Load(), "panicking=%v: copy %d", panicking, id)
		}
		if !panicking {
			assert.True(t, exited, "the caller's Goexit proceeds")
			assert.Nil(t, v)
			continue
		}
		require.IsType(t, &workers.PanicError{}, v, "the panic replaces the Goexit")
		pe := v.(*workers.PanicError)
		assert.Equal(t, "late boom", pe.Value)
		assert.Equal(t, 2, pe.Worker)
	}
}
