package gang

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
)

// beside prepares t and runs n copies of it in d's side slot.
func beside(d *Dispatcher, t tasks.Task, n int) (bool, int, *PanicError) {
	p, pe := Prepare(t)
	if pe != nil {
		return false, 0, pe
	}
	return d.RunBeside(p, n)
}

// TestRunBesideEachIDOnce: a coordinator runs main runs of every kind and size
// on a long-lived dispatcher while three goroutines submit side runs of 1-9
// copies (more than the workers). Every id of every run, main or side, runs
// exactly once; a side run that finds the slot taken runs nothing; and, with
// two processors, the workers did take side copies (with one, the holder
// claims every copy before a worker can run). At GOMAXPROCS 1 and 2,
// spinning and parking.
func TestRunBesideEachIDOnce(t *testing.T) {
	for _, procs := range []int{1, 2} {
		for _, spinning := range []time.Duration{0, 20 * time.Microsecond} {
			t.Run(fmt.Sprintf("procs=%d/spin=%v", procs, spinning), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				const workers, rounds = 4, 100
				d := New(workers)
				d.SetSpin(spinning)
				stop := serve(d, workers)
				defer stop()
				var wg sync.WaitGroup
				var sideOK, sideRefused atomic.Int64
				for g := range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := range rounds {
							n := 1 + (g+k)%9
							r := newRecorder(n, true)
							ok, ran, pe := beside(d, busy{r}, n)
							require.Nil(t, pe)
							if !ok {
								sideRefused.Add(1)
								for id := range r.seen {
									assert.Zero(t, r.seen[id].Load(), "refused side run ran copy %d", id)
								}
								continue
							}
							sideOK.Add(1)
							r.check(t)
							assert.GreaterOrEqual(t, ran, 1, "the holder runs copy 0")
						}
					}()
				}
				for k := range rounds {
					n := 1 + k%workers
					caller := k%3 == 0
					if caller {
						n++
					}
					r := newRecorder(n, caller)
					_, pe := run(d, r, n)
					require.Nil(t, pe)
					r.check(t)
				}
				wg.Wait()
				var side uint64
				for i := range workers {
					side += d.WorkerStats(i).Side
				}
				t.Logf("side runs %d, refused %d, side copies on workers %d", sideOK.Load(), sideRefused.Load(), side)
				assert.NotZero(t, sideOK.Load())
				if procs > 1 && spinning == 0 {
					// Parked workers are woken for side runs; spinning
					// ones may share the holder's processor and then find
					// every copy claimed (see docs/threading-model.md).
					assert.NotZero(t, side, "no worker took a side copy")
				}
			})
		}
	}
}

// busy is a recorder whose copies take tens of microseconds, long enough for
// a woken worker to arrive while copies are left.
type busy struct{ *recorder }

func (b busy) Work(id int) {
	b.recorder.Work(id)
	for start := time.Now(); time.Since(start) < 20*time.Microsecond; {
	}
}

// TestRunBesideWakesAParkedWorker: the main run keeps worker 0 busy; worker
// 1 is parked. A side run of two copies that wait for each other can finish
// only if the holder woke worker 1 to take copy 1.
func TestRunBesideWakesAParkedWorker(t *testing.T) {
	d := New(2)
	d.SetSpin(0) // every idle worker parks at once
	stop := serve(d, 2)
	defer stop()
	waitParked(t, d, 1)

	hold, release := make(chan struct{}), make(chan struct{})
	mainDone := make(chan struct{})
	go func() {
		defer close(mainDone)
		_, pe := run(d, tasks.Func("hold", func(int) { close(hold); <-release }), 1)
		assert.Nil(t, pe)
	}()
	<-hold
	waitParked(t, d, 1)

	var meet sync.WaitGroup
	meet.Add(2)
	var on [2]atomic.Uintptr
	me := goid.Get()
	testutil.Within(t, "a side run whose copies meet", time.Minute, func() {
		ok, ran, pe := beside(d, tasks.CallerRuns(tasks.Func("meet", func(id int) {
			on[id].Store(goid.Get())
			meet.Done()
			meet.Wait()
		})), 2)
		assert.True(t, ok)
		assert.Equal(t, 1, ran)
		assert.Nil(t, pe)
	})
	assert.NotEqual(t, me, on[1].Load(), "copy 1 ran on the holder")
	assert.Equal(t, uint64(1), d.WorkerStats(1).Side)
	close(release)
	<-mainDone
}

// waitParked waits until worker i has committed to park.
func waitParked(t *testing.T, d *Dispatcher, i int) {
	t.Helper()
	testutil.Within(t, fmt.Sprintf("worker %d parks", i), time.Minute, func() {
		for d.slots[i].state.Load() != parked {
			time.Sleep(50 * time.Microsecond)
		}
	})
}

// TestRunBesideSlotTaken: while one side run holds the slot, another
// submitter's RunBeside returns at once without running anything, and the
// slot is free again after the first one's end.
func TestRunBesideSlotTaken(t *testing.T) {
	d := New(1)
	stop := serve(d, 1)
	defer stop()
	in, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ok, _, pe := beside(d, tasks.CallerRuns(tasks.Func("hold", func(id int) {
			if id == 0 {
				close(in)
				<-release
			}
		})), 2)
		assert.True(t, ok)
		assert.Nil(t, pe)
	}()
	<-in
	r := newRecorder(3, true)
	ok, ran, pe := beside(d, r, 3)
	assert.False(t, ok)
	assert.Zero(t, ran)
	assert.Nil(t, pe)
	for id := range r.seen {
		assert.Zero(t, r.seen[id].Load(), "copy %d ran", id)
	}
	close(release)
	<-done
	ok, ran, pe = beside(d, r, 3)
	assert.True(t, ok)
	assert.Positive(t, ran)
	assert.Nil(t, pe)
	r.check(t)
}

// TestRunBesidePanics: panics of side copies, on the holder and on workers,
// come back as the run's *PanicError with the count; a worker's Goexit is
// reported and its goroutine replaced; the slot and the dispatcher stay
// usable.
func TestRunBesidePanics(t *testing.T) {
	d := New(3)
	d.SetSpin(time.Minute) // workers stay awake, so they take copies
	stop := serve(d, 3)
	defer stop()
	const n = 40
	var ran atomic.Int32
	ok, _, pe := beside(d, tasks.CallerRuns(tasks.Func("boom", func(id int) {
		ran.Add(1)
		time.Sleep(100 * time.Microsecond)
		if id%10 == 3 {
			panic(fmt.Sprint("boom ", id))
		}
	})), n)
	require.True(t, ok)
	require.NotNil(t, pe)
	assert.Equal(t, int32(n), ran.Load(), "every copy ran")
	assert.Equal(t, 4, pe.Panics)
	assert.Equal(t, "boom", pe.Task)
	assert.Equal(t, fmt.Sprint("boom ", pe.Worker), pe.Value)

	// A Goexit on a worker: find a copy that runs off the holder.
	me := goid.Get()
	var exits atomic.Int32
	for range 50 {
		_, _, pe = beside(d, tasks.CallerRuns(tasks.Func("exit", func(int) {
			time.Sleep(50 * time.Microsecond)
			if goid.Get() != me && exits.CompareAndSwap(0, 1) {
				runtime.Goexit()
			}
		})), 8)
		if pe != nil {
			break
		}
	}
	require.NotNil(t, pe, "no copy ran on a worker in 50 side runs")
	assert.True(t, pe.Goexit)
	assert.False(t, pe.OnCaller)

	r := newRecorder(6, true)
	ok, _, pe = beside(d, r, 6)
	assert.True(t, ok)
	assert.Nil(t, pe)
	r.check(t)
	r = newRecorder(3, false)
	_, pe = run(d, r, 3)
	assert.Nil(t, pe)
	r.check(t)
}

// TestRunBesideGoexitOnHolder: a copy on the holder that calls Goexit lets
// every other copy run and the run end before the Goexit proceeds; a panic of
// another copy is raised instead of the Goexit.
func TestRunBesideGoexitOnHolder(t *testing.T) {
	d := New(1) // no goroutine serves it: every copy is the holder's
	for _, other := range []bool{false, true} {
		r := newRecorder(5, true)
		o := testutil.Call(func() {
			_, _, _ = beside(d, tasks.CallerRuns(tasks.Func("exit", func(id int) {
				r.seen[id].Add(1)
				switch {
				case id == 1:
					runtime.Goexit()
				case id == 3 && other:
					panic("other")
				}
			})), 5)
		})
		r.check(t)
		if other {
			require.True(t, o.Panicked, "%+v", o)
			pe, ok := o.Value.(*PanicError)
			require.True(t, ok, "%T", o.Value)
			assert.Equal(t, "other", pe.Value)
		} else {
			assert.True(t, o.Goexit, "%+v", o)
		}
		ok, _, pe := beside(d, newRecorder(2, true), 2)
		assert.True(t, ok, "the slot is free after the Goexit")
		assert.Nil(t, pe)
	}
}

// TestRunBesideAfterStop: after Stop no worker takes copies and none is
// woken; the holder runs them all.
func TestRunBesideAfterStop(t *testing.T) {
	d := New(2)
	stop := serve(d, 2)
	stop()
	r := newRecorder(4, true)
	ok, ran, pe := beside(d, r, 4)
	assert.True(t, ok)
	assert.Equal(t, 4, ran)
	assert.Nil(t, pe)
	r.check(t)
}

// TestRunBesideMisuse: bad input panics with the package's name.
func TestRunBesideMisuse(t *testing.T) {
	d := New(1)
	assert.PanicsWithValue(t, "gang: RunBeside: zero Plan (make one with Prepare)", func() { d.RunBeside(Plan{}, 1) })
	plain, _ := Prepare(tasks.Func("plain", func(int) {}))
	assert.PanicsWithValue(t, `gang: RunBeside: task "plain" did not opt in to caller-runs`, func() { d.RunBeside(plain, 1) })
	cr, _ := Prepare(tasks.CallerRuns(tasks.Func("cr", func(int) {})))
	assert.PanicsWithValue(t, fmt.Sprintf("gang: RunBeside: n = 0 out of range [1, %d]", MaxSlots), func() { d.RunBeside(cr, 0) })
}

// TestMainRunTakesCopyOfAsideWorker: worker who (0 or 1) is busy with a side
// copy that ends only after a plain main run of two copies that meet at a
// barrier has finished; the awake surplus worker 2 takes the aside worker's
// copy of the main run, since an aside worker counts as not awake.
func TestMainRunTakesCopyOfAsideWorker(t *testing.T) {
	d := New(3)
	d.SetSpin(time.Minute)
	stop := serve(d, 3)
	defer stop()
	var holder atomic.Uintptr
	for try := 0; ; try++ {
		require.Less(t, try, 200, "worker 2 took every side copy")
		mainDone := make(chan struct{})
		sideIn := make(chan struct{})
		sideDone := make(chan struct{})
		go func() {
			defer close(sideDone)
			holder.Store(goid.Get())
			// Copy 0, on the holder, gives a worker a few milliseconds to
			// take copy 1 (else the holder takes it); copy 1, on a worker,
			// waits for the main run.
			ok, _, pe := beside(d, tasks.CallerRuns(tasks.Func("aside", func(id int) {
				if id == 0 {
					select {
					case <-sideIn:
					case <-time.After(5 * time.Millisecond):
					}
					return
				}
				close(sideIn)
				if goid.Get() != holder.Load() {
					<-mainDone
				}
			})), 2)
			assert.True(t, ok)
			assert.Nil(t, pe)
		}()
		<-sideIn
		who := -1
		for i := range d.slots {
			if d.slots[i].state.Load() == aside {
				who = i
			}
		}
		if who < 0 || who == 2 {
			// Copy 1 ran on the holder or on worker 2: nothing to test.
			close(mainDone)
			<-sideDone
			continue
		}
		var meet sync.WaitGroup
		meet.Add(2)
		testutil.Within(t, "a plain run while a worker is aside", time.Minute, func() {
			_, pe := run(d, tasks.Func("meet", func(int) { meet.Done(); meet.Wait() }), 2)
			assert.Nil(t, pe)
		})
		close(mainDone)
		<-sideDone
		assert.Positive(t, d.WorkerStats(2).Copies, "the surplus worker ran a copy")
		return
	}
}

// TestWakeTreeSkipsAsideWorker: worker 0, which the tree makes the parent of
// workers 2 and 3, is busy with a side copy that returns only once copies 2
// and 3 of a plain main run have started, while copies 1-3 of that run meet
// at a barrier. Only if the coordinator wakes worker 0's children on its
// behalf does either finish.
func TestWakeTreeSkipsAsideWorker(t *testing.T) {
	d := New(4)
	d.SetSpin(0)
	var wg sync.WaitGroup
	serveOne := func(i int) {
		wg.Add(1)
		go func() { defer wg.Done(); d.Serve(i) }()
	}
	defer func() { d.Stop(4); wg.Wait() }()
	release := make(chan struct{}) // ends the side copy if the test fails
	defer close(release)
	serveOne(0)
	waitParked(t, d, 0)
	var started [4]chan struct{}
	for i := range started {
		started[i] = make(chan struct{})
	}
	var holder atomic.Uintptr
	sideIn := make(chan struct{})
	sideDone := make(chan struct{})
	go func() {
		defer close(sideDone)
		holder.Store(goid.Get())
		// Slots 1-3 have no goroutine yet, so the holder wakes worker 0.
		ok, _, pe := beside(d, tasks.CallerRuns(tasks.Func("aside", func(id int) {
			if id == 0 {
				<-sideIn
				return
			}
			close(sideIn)
			if !assert.NotEqual(t, holder.Load(), goid.Get(), "copy 1 ran on the holder") {
				return
			}
			for _, c := range started[2:] {
				select {
				case <-c:
				case <-release:
					return
				}
			}
		})), 2)
		assert.True(t, ok)
		assert.Nil(t, pe)
	}()
	<-sideIn
	for i := 1; i < 4; i++ {
		serveOne(i)
		waitParked(t, d, i)
	}
	require.Equal(t, aside, d.slots[0].state.Load(), "worker 0 runs the side copy")
	// Copies 1-3 meet; the release path keeps a failed test from hanging
	// in its deferred Stop.
	var arrived atomic.Int32
	allMet := make(chan struct{})
	testutil.Within(t, "a plain run whose tree parent is aside", time.Minute, func() {
		_, pe := run(d, tasks.Func("meet", func(id int) {
			if id == 0 {
				return
			}
			close(started[id])
			if arrived.Add(1) == 3 {
				close(allMet)
			}
			select {
			case <-allMet:
			case <-release:
			}
		}), 4)
		assert.Nil(t, pe)
	})
	<-sideDone
}
