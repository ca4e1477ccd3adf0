package gang

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
)

// TestClaimOncePerRun: a copy is claimed once per run, and a claim made
// with an older run's generation always fails.
func TestClaimOncePerRun(t *testing.T) {
	d := New(2)
	assert.True(t, d.claim(0, 5))
	assert.False(t, d.claim(0, 5), "second claim of the same run")
	assert.False(t, d.claim(0, 4), "stale claim")
	assert.False(t, d.claim(0, 1), "stale claim")
	assert.True(t, d.claim(0, 6))
	assert.True(t, d.claim(1, 1<<62), "generations are full 64-bit values")
	assert.False(t, d.claim(1, 1<<62-1))
}

// TestSnapshotConsistent: a reader never pairs a run word with another run's
// generation, even when the coordinator publishes runs as fast as it can.
func TestSnapshotConsistent(t *testing.T) {
	d := New(1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for g := uint64(1); ; g++ {
			select {
			case <-stop:
				return
			default:
			}
			d.runGen.Store(g)
			d.run.Store((g&genMask)<<genShift | g%7)
		}
	}()
	for range 100000 {
		r, g := d.snapshot()
		require.Equal(t, g&genMask, genOf(r))
		require.Equal(t, g%7, r&nMask, "run word and generation from different runs")
	}
	close(stop)
	wg.Wait()
}

// TestMixedRunSequences: one long-lived dispatcher runs a random sequence of
// runs of every size, plain and caller-runs mixed, with spinning and with
// parking workers: every copy of every run runs exactly once.
func TestMixedRunSequences(t *testing.T) {
	for _, spin := range []time.Duration{0, 20 * time.Microsecond, time.Millisecond} {
		for _, workers := range []int{1, 3, 9, 20} {
			t.Run(fmt.Sprintf("spin=%v/workers=%d", spin, workers), func(t *testing.T) {
				d := New(workers)
				d.SetSpin(spin)
				stop := serve(d, workers)
				defer stop()
				rng := rand.New(rand.NewPCG(1, uint64(workers)))
				runs := 400
				if testing.Short() {
					runs = 100
				}
				for range runs {
					caller := rng.IntN(2) == 0
					n := 1 + rng.IntN(workers)
					if caller {
						n = 1 + rng.IntN(workers+1)
					}
					r := newRecorder(n, caller)
					ran, p := run(d, r, n)
					require.Nil(t, p)
					r.check(t)
					if !caller {
						require.Zero(t, ran)
					}
				}
			})
		}
	}
}

// TestSurplusWorkersStopLooking: workers that runs no longer need park and
// are not woken by runs that do not need them: spinning follows demand.
func TestSurplusWorkersStopLooking(t *testing.T) {
	d := New(4)
	d.SetSpin(time.Second) // without the demand policy, idle workers would spin all along
	stop := serve(d, 4)
	defer stop()
	one, _ := Prepare(tasks.Func("one", func(int) {}))
	all, _ := Prepare(tasks.Func("all", func(int) {}))
	d.Run(all, 4) // every worker saw a run that needed it
	for range 10 {
		d.Run(one, 1)
	}
	for i := 1; i < 4; i++ {
		require.Eventually(t, func() bool { return d.slots[i].state.Load() == parked },
			10*time.Second, time.Millisecond, "surplus worker %d never parked", i)
	}
	before := make([]WorkerStats, 4)
	for i := range before {
		before[i] = d.WorkerStats(i)
	}
	for range 100 {
		d.Run(one, 1)
	}
	for i := 1; i < 4; i++ {
		assert.Equal(t, before[i], d.WorkerStats(i), "parked surplus worker %d was woken or looked at runs", i)
	}
	assert.Equal(t, before[0].Copies+100, d.WorkerStats(0).Copies)
}

// TestAwakeWorkerTakesParkedWorkersCopy: a copy meant for a parked worker is
// run by a surplus worker that is awake, without waiting for a wake-up.
// Worker 0 has no goroutine at all here; its slot is marked parked, so only
// the awake worker 1 can run copy 0. Worker 1 is awake only if the wait
// policy lets it spin: on a machine it finds busy (other processes, other
// test binaries) it would park at once and the run would never end, so the
// test fixes the policy's view of the machine as idle.
func TestAwakeWorkerTakesParkedWorkersCopy(t *testing.T) {
	defer spin.ForceView(2, false)()
	d := New(2)
	d.SetSpin(time.Minute)
	d.slots[0].state.Store(parked)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); d.Serve(1) }()
	defer func() {
		d.Stop(2)
		wg.Wait()
	}()
	var on atomic.Uint64
	p, _ := Prepare(tasks.Func("copy0", func(int) { on.Store(goid.Get()) }))
	var pe *PanicError
	testutil.Within(t, "the run of copy 0", 10*time.Second, func() { _, pe = d.Run(p, 1) })
	require.Nil(t, pe)
	assert.NotZero(t, on.Load())
	assert.Equal(t, uint64(1), d.WorkerStats(1).Copies)
	assert.True(t, d.slots[0].sem.TryWait(), "the coordinator owes the absent worker 0 one permit")
	assert.False(t, d.slots[0].sem.TryWait(), "and only one")
}

// TestCallerTakesParkedWorkersCopy: in a caller-runs run the caller runs the
// copies no worker started; here no worker can start (their slots are marked
// parked and have no goroutine), so the caller runs all of them.
func TestCallerTakesParkedWorkersCopy(t *testing.T) {
	d := New(3)
	for i := range d.slots {
		d.slots[i].state.Store(parked)
	}
	r := newRecorder(4, true)
	ran, pe := run(d, r, 4)
	require.Nil(t, pe)
	r.check(t)
	assert.Equal(t, 4, ran)
}

// TestTreeWakesEveryParkedWorker: with spinning off every worker parks; a
// run of n copies that meet at a barrier needs all n workers awake at once,
// which happens only if the wake-up tree reaches all of them.
func TestTreeWakesEveryParkedWorker(t *testing.T) {
	const n = 13
	d := New(n)
	d.SetSpin(0)
	stop := serve(d, n)
	defer stop()
	for round := range 20 {
		var arrived atomic.Int32
		var gs sync.Map
		p, _ := Prepare(tasks.Func("barrier", func(id int) {
			gs.Store(goid.Get(), id)
			arrived.Add(1)
			for arrived.Load() < n {
				runtime.Gosched()
			}
		}))
		_, pe := d.Run(p, n)
		require.Nil(t, pe, "round %d", round)
		count := 0
		gs.Range(func(any, any) bool { count++; return true })
		require.Equal(t, n, count, "round %d: copies ran on %d goroutines", round, count)
	}
	parks := uint64(0)
	for i := range n {
		parks += d.WorkerStats(i).Parks
	}
	assert.NotZero(t, parks, "with no spin the workers must have parked")
}

// TestPlainCopiesMeetAtBarrier: the copies of a plain run may wait for each
// other. One long-lived dispatcher with surplus workers runs plain runs of
// every size whose copies pass several barriers, with spinning and with
// parked workers, at GOMAXPROCS 1 and 2: a look-ahead or helper claim that
// took a copy some other copy waits for would deadlock, and the run would
// not end.
func TestPlainCopiesMeetAtBarrier(t *testing.T) {
	for _, procs := range []int{1, 2} {
		for _, spin := range []time.Duration{0, 50 * time.Microsecond} {
			t.Run(fmt.Sprintf("procs=%d/spin=%v", procs, spin), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				const workers = 9
				d := New(workers)
				d.SetSpin(spin)
				stop := serve(d, workers)
				defer stop()
				rng := rand.New(rand.NewPCG(uint64(procs), uint64(spin)))
				done := make(chan struct{})
				go func() {
					defer close(done)
					for round := range 300 {
						n := 1 + rng.IntN(workers)
						var arrived atomic.Int64
						p, _ := Prepare(tasks.Func("barriers", func(int) {
							for k := int64(1); k <= 3; k++ {
								arrived.Add(1)
								for arrived.Load() < k*int64(n) {
									runtime.Gosched()
								}
							}
						}))
						if _, pe := d.Run(p, n); pe != nil {
							t.Errorf("round %d: %v", round, pe)
							return
						}
						if got := arrived.Load(); got != 3*int64(n) {
							t.Errorf("round %d: %d arrivals, want %d", round, got, 3*n)
							return
						}
					}
				}()
				select {
				case <-done:
				case <-time.After(2 * time.Minute):
					t.Fatal("plain copies waiting at a barrier deadlocked")
				}
			})
		}
	}
}

type bigTask struct{ data []byte }

func (*bigTask) Name() string { return "big" }
func (*bigTask) Work(int)     {}

// TestFinishedTaskNotRetained: after Run returns, the dispatcher keeps
// nothing of the task reachable.
func TestFinishedTaskNotRetained(t *testing.T) {
	for _, caller := range []bool{false, true} {
		d := New(2)
		stop := serve(d, 2)
		var collected <-chan struct{}
		func() {
			bt := &bigTask{data: make([]byte, 1<<20)}
			collected = testutil.OnCollect(bt)
			var task tasks.Task = bt
			if caller {
				task = tasks.CallerRuns(bt)
			}
			_, pe := run(d, task, 2)
			require.Nil(t, pe)
		}()
		ok := testutil.Collected(collected, time.Second)
		assert.True(t, ok, "caller=%v: the finished task is still reachable", caller)
		stop()
	}
}

// hostile is a task whose methods misbehave as configured.
type hostile struct {
	namePanics, nameGoexits, workPanics, callerPanics, caller bool
	ran                                                       atomic.Int32
}

func (h *hostile) Name() string {
	if h.namePanics {
		panic("name boom")
	}
	if h.nameGoexits {
		runtime.Goexit()
	}
	return "hostile"
}
func (h *hostile) Work(int) {
	h.ran.Add(1)
	if h.workPanics {
		panic("work boom")
	}
}
func (h *hostile) CallerCanRun() bool {
	if h.callerPanics {
		panic("caller boom")
	}
	return h.caller
}

// TestHostileTaskMethods: panics (and Goexits) in Name and CallerCanRun are
// reported, never crash a worker, hang a run or lose a copy.
func TestHostileTaskMethods(t *testing.T) {
	d := New(3)
	stop := serve(d, 3)
	defer stop()
	for _, caller := range []bool{false, true} {
		h := &hostile{namePanics: true, workPanics: true, caller: caller}
		_, pe := run(d, h, 3)
		require.NotNil(t, pe, "caller=%v", caller)
		assert.Equal(t, "<Name panicked: name boom>", pe.Task)
		assert.Equal(t, "work boom", pe.Value)
		assert.Equal(t, 3, pe.Panics)
		assert.Equal(t, int32(3), h.ran.Load())

		h = &hostile{nameGoexits: true, workPanics: true, caller: caller}
		if !caller {
			_, pe = run(d, h, 3)
			require.NotNil(t, pe, "Name's Goexit after a panic")
			assert.Equal(t, "work boom", pe.Value)
			assert.Equal(t, int32(3), h.ran.Load())
			continue
		}
		// On the caller, Name's Goexit is the caller's Goexit: it proceeds
		// once the workers' copies ended, turned into their panic (see Run).
		got := make(chan any)
		go func() {
			defer func() { got <- recover() }()
			run(d, h, 3)
		}()
		v := <-got
		if v != nil { // nil: the caller's copy was the only one to panic
			require.IsType(t, &PanicError{}, v)
			assert.Equal(t, "work boom", v.(*PanicError).Value)
		}
		assert.Equal(t, int32(3), h.ran.Load())
	}
	h := &hostile{callerPanics: true}
	p, pe := Prepare(h)
	require.NotNil(t, pe)
	assert.Equal(t, Plan{}, p)
	assert.Equal(t, "CallerCanRun", pe.Method)
	assert.Equal(t, "caller boom", pe.Value)
	assert.Contains(t, pe.Error(), `task "hostile" CallerCanRun (on caller) panic: caller boom`)
	// Still usable.
	r := newRecorder(3, false)
	_, pe = run(d, r, 3)
	require.Nil(t, pe)
	r.check(t)
}

// TestPanicNilIsAPanic: panic(nil) is reported as a panic, not a Goexit and
// not swallowed, in every mode, also under GODEBUG=panicnil=1 (where recover
// returns nil for it). The test re-runs itself in a child process with that
// setting.
func TestPanicNilIsAPanic(t *testing.T) {
	if os.Getenv("GANG_TEST_PANICNIL_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPanicNilIsAPanic$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GANG_TEST_PANICNIL_CHILD=1", "GODEBUG=panicnil=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child with GODEBUG=panicnil=1:\n%s", out)
		require.Contains(t, string(out), "PASS")
	}
	d := New(2)
	stop := serve(d, 2)
	defer stop()
	for _, caller := range []bool{false, true} {
		var task tasks.Task = tasks.Func("nil", func(int) { panic(nil) })
		if caller {
			task = tasks.CallerRuns(task)
		}
		_, pe := run(d, task, 2)
		require.NotNil(t, pe, "caller=%v: panic(nil) swallowed", caller)
		assert.False(t, pe.Goexit, "caller=%v: panic(nil) reported as Goexit", caller)
		assert.Equal(t, 2, pe.Panics)
	}
	p, _ := Prepare(tasks.Func("nil", func(int) { panic(nil) }))
	pe := RunOnCaller(p, 1)
	require.NotNil(t, pe, "panic(nil) on the caller swallowed")
	assert.False(t, pe.Goexit)
}

type goexitName struct{ ran []atomic.Int32 }

func (g *goexitName) Name() string { runtime.Goexit(); return "" }
func (g *goexitName) Work(id int)  { g.ran[id].Add(1) }

// TestGoexitInNameUnderTrace: with tracing on, Prepare asks the task's Name
// once for the trace regions; a Goexit there proceeds on the caller before
// anything runs, and the dispatcher stays usable.
func TestGoexitInNameUnderTrace(t *testing.T) {
	if err := trace.Start(io.Discard); err != nil {
		t.Skip(err)
	}
	defer trace.Stop()
	d := New(2)
	stop := serve(d, 2)
	defer stop()
	tk := &goexitName{ran: make([]atomic.Int32, 2)}
	exited := make(chan bool)
	go func() {
		normal := false
		defer func() { exited <- !normal }()
		run(d, tk, 2)
		normal = true
	}()
	assert.True(t, <-exited, "Name's Goexit proceeds on the caller")
	assert.Zero(t, tk.ran[0].Load()+tk.ran[1].Load(), "no copy ran")
	r := newRecorder(2, false)
	_, pe := run(d, r, 2)
	require.Nil(t, pe)
	r.check(t)
}

// TestSetSpinBetweenRuns: SetSpin may be called while idle workers wait
// (the race detector checks it).
func TestSetSpinBetweenRuns(t *testing.T) {
	d := New(1)
	stop := serve(d, 1)
	defer stop()
	r := newRecorder(1, false)
	run(d, r, 1)
	time.Sleep(time.Millisecond)
	d.SetSpin(time.Microsecond)
	r2 := newRecorder(1, false)
	_, pe := run(d, r2, 1)
	require.Nil(t, pe)
	r2.check(t)
}

// TestRunWordHoldsLargestN: the largest n that Run accepts, a caller-runs
// run on a dispatcher of maxSlots workers (n = maxSlots+1), must fit in the
// run word's n field: with maxSlots = nMask, n = 1<<nBits was callerBit
// itself, the word carried n = 0, every worker computed m = -1 and ran
// nothing, and the caller ran all n copies alone.
func TestRunWordHoldsLargestN(t *testing.T) {
	const largestN = maxSlots + 1 // Run's check: m = n-1 <= len(d.slots) with caller-runs
	assert.LessOrEqual(t, uint64(largestN), uint64(nMask),
		"a caller-runs run of n = maxSlots+1 = %d does not fit in the run word's %d-bit n field", largestN, nBits)
}

// A late run (Plan.Late) leaves a parked worker parked: the caller runs
// every copy, nobody signals the worker, and the run reports the copies as
// the caller's. Without Late, the same run wakes it.
func TestLateRunLeavesWorkersParked(t *testing.T) {
	d := New(1)
	d.SetSpin(0)
	d.lateBound = time.Hour // no timer wake-up within the test
	stop := serve(d, 1)
	defer stop()
	for range 100 {
		for d.slots[0].state.Load() != parked {
			runtime.Gosched()
		}
		before := d.WorkerStats(0)
		r := newRecorder(2, true)
		p, pe := Prepare(r)
		require.Nil(t, pe)
		ran, pe := d.Run(p.Late(), 2)
		require.Nil(t, pe)
		r.check(t)
		assert.Equal(t, 2, ran, "the caller runs every copy of a late run nobody woke")
		assert.Equal(t, before, d.WorkerStats(0), "the parked worker was woken or looked at a run")
		require.Equal(t, parked, d.slots[0].state.Load())
	}
	woken := d.WorkerStats(0).Wakeups
	for d.slots[0].state.Load() != parked {
		runtime.Gosched()
	}
	_, pe := run(d, newRecorder(2, true), 2)
	require.Nil(t, pe)
	testutil.Within(t, "the worker's wake-up", 10*time.Second, func() {
		for d.WorkerStats(0).Wakeups == woken {
			runtime.Gosched()
		}
	})
}

// Wake from the caller's copy of a late run wakes the parked workers: here
// the caller's copy waits until worker 0 has started copy 0, which only a
// wake-up can make happen. Wake outside a late run does nothing.
func TestWakeFromTheCallersCopy(t *testing.T) {
	d := New(1)
	d.SetSpin(0)
	stop := serve(d, 1)
	defer stop()
	d.Wake() // no run: nothing to wake
	for range 20 {
		for d.slots[0].state.Load() != parked {
			runtime.Gosched()
		}
		started := make(chan struct{})
		task := tasks.CallerRuns(tasks.Func("late", func(c int) {
			if c == 0 {
				close(started)
				return
			}
			d.Wake()
			d.Wake() // once is enough; the second does nothing
			<-started
		}))
		p, pe := Prepare(task)
		require.Nil(t, pe)
		var ran int
		testutil.Within(t, "the late run whose caller wakes its worker", 10*time.Second, func() { ran, pe = d.Run(p.Late(), 2) })
		require.Nil(t, pe)
		assert.Equal(t, 1, ran, "copy 0 ran on the woken worker")
	}
}

// A late run's workers are woken by its bound whatever the caller's copy
// does: here it waits until copy 0 has started and never calls Wake, so only
// the dispatcher's timer can wake the parked worker. The same with the
// default bound, and at GOMAXPROCS=1.
func TestLateRunWakesByItsBound(t *testing.T) {
	for _, procs := range []int{0, 1} {
		for _, bound := range []time.Duration{0, time.Microsecond, spin.LateBound} {
			t.Run(fmt.Sprintf("procs=%d/bound=%v", procs, bound), func(t *testing.T) {
				if procs > 0 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				}
				d := New(1)
				d.SetSpin(0)
				d.lateBound = bound
				stop := serve(d, 1)
				defer stop()
				for range 5 {
					for d.slots[0].state.Load() != parked {
						runtime.Gosched()
					}
					started := make(chan struct{})
					task := tasks.CallerRuns(tasks.Func("meet", func(c int) {
						if c == 0 {
							close(started)
							return
						}
						<-started
					}))
					p, pe := Prepare(task)
					require.Nil(t, pe)
					var ran int
					testutil.Within(t, "the late run whose caller waits for copy 0", 10*time.Second, func() { ran, pe = d.Run(p.Late(), 2) })
					require.Nil(t, pe)
					assert.Equal(t, 1, ran, "copy 0 ran on the woken worker")
				}
			})
		}
	}
}

// A late run whose caller copy calls runtime.Goexit before it woke anyone:
// the caller stops claiming, so the deferred end wait must wake the parked
// worker, which runs the copy the caller left (it hung before).
func TestLateRunGoexitWakesTheWorkers(t *testing.T) {
	d := New(1)
	d.SetSpin(0)
	stop := serve(d, 1)
	defer stop()
	for d.slots[0].state.Load() != parked {
		runtime.Gosched()
	}
	var ran atomic.Int32
	task := tasks.CallerRuns(tasks.Func("late-goexit", func(c int) {
		if c == 1 {
			runtime.Goexit()
		}
		ran.Add(1)
	}))
	p, pe := Prepare(task)
	require.Nil(t, pe)
	testutil.Within(t, "the late run whose caller copy exits", 10*time.Second, func() {
		done := make(chan struct{})
		go func() { defer close(done); d.Run(p.Late(), 2) }()
		<-done
	})
	assert.Equal(t, int32(1), ran.Load(), "copy 0 ran once, on the worker")
}
