package gang

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts k goroutines serving d and returns a function that stops them
// and waits for them to exit. A goroutine whose copy calls Goexit is
// replaced, as package workers does.
func serve(d *Dispatcher, k int) (stop func()) {
	var wg sync.WaitGroup
	var loop func(i int)
	loop = func(i int) {
		normal := false
		defer func() {
			if !normal {
				wg.Add(1)
				go loop(i)
			}
			wg.Done()
		}()
		d.Serve(i)
		normal = true
	}
	for i := range k {
		wg.Add(1)
		go loop(i)
	}
	return func() { d.Stop(k); wg.Wait() }
}

// run prepares t and runs n copies of it on d.
func run(d *Dispatcher, t tasks.Task, n int) (int, *PanicError) {
	p, pe := Prepare(t)
	if pe != nil {
		return 0, pe
	}
	return d.Run(p, n)
}

// recorder is a task that counts each id's executions.
type recorder struct {
	name   string
	caller bool
	seen   []atomic.Int32
}

func newRecorder(n int, caller bool) *recorder {
	return &recorder{name: "rec", caller: caller, seen: make([]atomic.Int32, n)}
}
func (r *recorder) Name() string       { return r.name }
func (r *recorder) Work(id int)        { r.seen[id].Add(1) }
func (r *recorder) CallerCanRun() bool { return r.caller }

func (r *recorder) check(t *testing.T) {
	t.Helper()
	for id := range r.seen {
		if got := r.seen[id].Load(); got != 1 {
			t.Errorf("copy %d ran %d times; want 1", id, got)
		}
	}
}

func TestRunEachIDOnce(t *testing.T) {
	for _, tc := range []struct {
		n, workers int
		caller     bool
	}{
		{1, 1, false}, {4, 4, false}, {8, 8, false}, {8, 16, false},
		{1, 0, true}, {4, 3, true}, {8, 7, true}, {8, 8, true},
	} {
		t.Run(fmt.Sprintf("n=%d/workers=%d/caller=%v", tc.n, tc.workers, tc.caller), func(t *testing.T) {
			d := New(max(tc.workers, 1))
			stop := serve(d, tc.workers)
			defer stop()
			for range 200 {
				r := newRecorder(tc.n, tc.caller)
				ran, p := run(d, r, tc.n)
				require.Nil(t, p)
				r.check(t)
				if tc.caller {
					assert.GreaterOrEqual(t, ran, 1, "the caller must keep at least one copy")
					assert.LessOrEqual(t, ran, tc.n)
				} else {
					assert.Zero(t, ran, "a task that did not opt in ran on the caller")
				}
			}
		})
	}
}

// TestCallerRunsAllWhenNoWorkerServes: with no serving goroutine and
// callerRuns, the caller must claim every copy itself and finish.
func TestCallerRunsAllWhenNoWorkerServes(t *testing.T) {
	d := New(4)
	// No goroutine serves, so the worker copies can only be claimed by the
	// caller; the run finishes only if it does so.
	r := newRecorder(5, true)
	ran, p := run(d, r, 5)
	require.Nil(t, p)
	r.check(t)
	assert.Equal(t, 5, ran)
}

func TestPanicCaptured(t *testing.T) {
	d := New(4)
	stop := serve(d, 4)
	defer stop()
	errBoom := errors.New("boom")
	var ran atomic.Int32
	task := tasks.Func("panicky", func(id int) {
		ran.Add(1)
		if id%2 == 1 {
			panic(fmt.Errorf("copy %d: %w", id, errBoom))
		}
	})
	_, p := run(d, task, 4)
	require.NotNil(t, p)
	assert.Equal(t, int32(4), ran.Load(), "copies that did not panic must still run")
	assert.Equal(t, "panicky", p.Task)
	assert.Equal(t, 2, p.Panics)
	assert.True(t, p.Worker == 1 || p.Worker == 3, "worker = %d", p.Worker)
	assert.ErrorIs(t, p, errBoom)
	assert.Contains(t, string(p.Stack), "gang.TestPanicCaptured", "stack should show the panicking function")
	assert.Contains(t, p.Error(), "boom")
	assert.Contains(t, p.Error(), "(and 1 more copy panicked)")

	// The dispatcher is usable afterwards and the panic state was cleared.
	r := newRecorder(4, false)
	_, p = run(d, r, 4)
	assert.Nil(t, p)
	r.check(t)
}

func TestGoexitOnWorkerIsReported(t *testing.T) {
	d := New(2)
	stop := serve(d, 2)
	defer stop()
	_, p := run(d, tasks.Func("exits", func(id int) {
		if id == 0 {
			runtime.Goexit()
		}
	}), 2)
	require.NotNil(t, p)
	assert.True(t, p.Goexit)
	assert.Contains(t, p.Error(), "called runtime.Goexit")
	// The replacement goroutine serves the next run.
	r := newRecorder(2, false)
	_, p = run(d, r, 2)
	assert.Nil(t, p)
	r.check(t)
}

func TestGoexitOnCallerWaitsForWorkers(t *testing.T) {
	d := New(3)
	stop := serve(d, 3)
	defer stop()
	var ran atomic.Int32
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		caller := goid.Get()
		run(d, tasks.CallerRuns(tasks.Func("caller-exits", func(id int) {
			ran.Add(1)
			if goid.Get() == caller {
				runtime.Goexit()
			}
			<-release
		})), 4)
		t.Error("Run returned normally; the caller's Goexit should have unwound it")
	}()
	close(release)
	<-done
	assert.Equal(t, int32(4), ran.Load(), "every copy must run before the caller's Goexit completes")
	r := newRecorder(4, true)
	_, p := run(d, r, 4)
	assert.Nil(t, p, "the Goexit must not leak into the next run")
	r.check(t)
}

func TestMisuse(t *testing.T) {
	d := New(2)
	plain, _ := Prepare(newRecorder(4, false))
	caller, _ := Prepare(newRecorder(4, true))
	assert.PanicsWithValue(t, "gang: Prepare: nil task", func() { Prepare(nil) })
	assert.PanicsWithValue(t, "gang: Run: zero Plan (make one with Prepare)", func() { d.Run(Plan{}, 1) })
	assert.PanicsWithValue(t, "gang: Run: n = 0 out of range for 2 workers (caller-runs false)", func() { d.Run(plain, 0) })
	assert.PanicsWithValue(t, "gang: Run: n = 3 out of range for 2 workers (caller-runs false)", func() { d.Run(plain, 3) })
	assert.PanicsWithValue(t, "gang: Run: n = 4 out of range for 2 workers (caller-runs true)", func() { d.Run(caller, 4) })
	assert.PanicsWithValue(t, "gang: Stop: k = -1 out of range [0, 2]", func() { d.Stop(-1) })
	assert.PanicsWithValue(t, "gang: Stop: k = 3 out of range [0, 2]", func() { d.Stop(3) })
	assert.PanicsWithValue(t, "gang: New: workers = 0 out of range [1, 65536]", func() { New(0) })
	assert.PanicsWithValue(t, "gang: SetSpin: negative spin budget -1ns", func() { d.SetSpin(-1) })
}

// TestVisibility: plain writes by every copy are visible after Run returns
// (the race detector flags a missing happens-before edge).
func TestVisibility(t *testing.T) {
	d := New(4)
	stop := serve(d, 4)
	defer stop()
	out := make([]int, 4)
	for round := range 100 {
		var task tasks.Task = tasks.Func("write", func(id int) { out[id] = round*10 + id })
		if round%2 == 0 {
			task = tasks.CallerRuns(task)
		}
		_, p := run(d, task, 4)
		require.Nil(t, p)
		for id, v := range out {
			require.Equal(t, round*10+id, v)
		}
	}
}

// TestRunOnCaller: every copy runs on the caller, in order, past panics and
// Goexits; the first panic comes back with the count; a Goexit proceeds once
// the other copies ran, unless another copy panicked.
func TestRunOnCaller(t *testing.T) {
	plan := func(t tasks.Task) Plan { p, _ := Prepare(tasks.CallerRuns(t)); return p }
	var got []int
	require.Nil(t, RunOnCaller(plan(tasks.Func("one", func(id int) { got = append(got, id) })), 3))
	assert.Equal(t, []int{0, 1, 2}, got)

	got = got[:0]
	pe := RunOnCaller(plan(tasks.Func("boom", func(id int) {
		got = append(got, id)
		if id > 0 {
			panic(fmt.Sprint("boom", id))
		}
	})), 3)
	require.NotNil(t, pe)
	assert.Equal(t, []int{0, 1, 2}, got, "a panic does not stop the other copies")
	assert.Equal(t, "boom1", pe.Value)
	assert.Equal(t, 1, pe.Worker)
	assert.True(t, pe.OnCaller)
	assert.Equal(t, 2, pe.Panics)
	assert.Contains(t, string(pe.Stack), "gang.TestRunOnCaller", "the stack is the panic site's")

	for _, c := range []struct {
		name      string
		panicking bool
	}{{"goexit", false}, {"goexit then panic", true}} {
		t.Run(c.name, func(t *testing.T) {
			var ran []int
			type result struct {
				normal bool
				r      any
			}
			out := make(chan result)
			go func() {
				normal := false
				defer func() { out <- result{normal, recover()} }()
				RunOnCaller(plan(tasks.Func("exit", func(id int) {
					ran = append(ran, id)
					if id == 0 {
						runtime.Goexit()
					}
					if id == 2 && c.panicking {
						panic("late")
					}
				})), 3)
				normal = true
			}()
			res := <-out
			assert.False(t, res.normal, "RunOnCaller must not return after a caller Goexit")
			assert.Equal(t, []int{0, 1, 2}, ran, "the other copies run before the Goexit proceeds")
			if c.panicking {
				pe, ok := res.r.(*PanicError)
				require.True(t, ok, "another copy's panic is raised instead of the Goexit: %v", res.r)
				assert.Equal(t, "late", pe.Value)
			} else {
				assert.Nil(t, res.r, "a Goexit proceeds, not turned into a panic")
			}
		})
	}
	assert.Panics(t, func() { RunOnCaller(Plan{}, 1) })
	assert.Panics(t, func() { RunOnCaller(plan(tasks.Func("x", func(int) {})), 0) })
	plain, _ := Prepare(tasks.Func("plain", func(int) {}))
	assert.PanicsWithValue(t, `gang: RunOnCaller: task "plain" did not opt in to caller-runs (n = 2)`, func() { RunOnCaller(plain, 2) },
		"a plain task's copies may meet at a barrier: one after another they would deadlock")
	assert.Nil(t, RunOnCaller(plain, 1), "one copy of a plain task waits for no other")
}

// depth returns how many frames its caller's goroutine has.
func depth() int {
	var pcs [1024]uintptr
	return runtime.Callers(1, pcs[:])
}

// TestRunOnCallerGoexitsDoNotNest: copies after a Goexit run on stacks no
// deeper than the first copy's, however many copies exit before them (run
// in a deferred call of the last Goexit, each would add its frames), each
// once and in order, with the panic among them reported on the caller.
func TestRunOnCallerGoexitsDoNotNest(t *testing.T) {
	const n = 200
	ran := make([]int, 0, n)
	depths := make([]int, 0, n)
	exited := make(chan any)
	go func() {
		normal := false
		defer func() {
			r := recover()
			if normal {
				r = "returned"
			}
			exited <- r
		}()
		p, _ := Prepare(tasks.CallerRuns(tasks.Func("exit", func(id int) {
			// Each copy starts after the last one ended (RunOnCaller's order).
			ran, depths = append(ran, id), append(depths, depth())
			if id == n/2 {
				panic("half")
			}
			runtime.Goexit()
		})))
		RunOnCaller(p, n)
		normal = true
	}()
	pe, ok := (<-exited).(*PanicError)
	require.True(t, ok, "the panic replaces the caller's Goexit")
	assert.Equal(t, "half", pe.Value)
	assert.Equal(t, n/2, pe.Worker)
	assert.True(t, pe.OnCaller, "a copy run after a Goexit is the caller's")
	assert.Equal(t, 1, pe.Panics, "the Goexits on the caller are not failures")
	require.Len(t, ran, n)
	for id := range n {
		require.Equal(t, id, ran[id], "copies in order")
		require.LessOrEqual(t, depths[id], depths[0]+8, "copy %d's stack is deeper than copy 0's: %v", id, depths[:id+1])
	}
}

// RunOnCaller checks n against tasks.MaxCopies, as every run does.
func TestRunOnCallerChecksTheCap(t *testing.T) {
	p, pe := Prepare(tasks.CallerRuns(tasks.Func("capped", func(int) { t.Error("a copy ran") })))
	require.Nil(t, pe)
	for _, n := range []int{0, tasks.MaxCopies + 1} {
		assert.PanicsWithValue(t, fmt.Sprintf("gang: RunOnCaller: n = %d out of range [1, %d]", n, tasks.MaxCopies),
			func() { RunOnCaller(p, n) })
	}
}
