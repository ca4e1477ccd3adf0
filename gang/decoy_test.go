package gang

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/tasks"
)

// serveDecoy starts d's decoy and returns a function that waits for it to
// return (after d.Stop).
func serveDecoy(d *Dispatcher) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.ServeDecoy()
	}()
	return wg.Wait
}

// TestDecoyLuredByWakeUps checks that wake-ups of parked workers lure the
// decoy in plain runs, caller-runs runs and runs woken through the tree, and
// only when GOMAXPROCS is above 1. Workers with no spin park after every run,
// so most runs wake them.
func TestDecoyLuredByWakeUps(t *testing.T) {
	for _, procs := range []int{1, 2} {
		for _, c := range []struct {
			name    string
			caller  bool
			workers int
			n       int
		}{
			{"plain n=1", false, 1, 1},
			{"caller-runs n=2", true, 1, 2},
			{"plain tree n=4", false, 4, 4},
		} {
			t.Run(fmt.Sprintf("GOMAXPROCS=%d/%s", procs, c.name), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				d := New(c.workers)
				d.SetSpin(0)
				stop := serve(d, c.workers)
				waitDecoy := serveDecoy(d)
				task := tasks.Func("decoy", func(int) {})
				if c.caller {
					task = tasks.CallerRuns(task)
				}
				var wakeups uint64
				for i := 0; i < 2000 && (d.decoy.Lured() == 0 || i < 200); i++ {
					_, pe := run(d, task, c.n)
					require.Nil(t, pe)
					// Let the decoy run and wait again: a lure finds it
					// waiting only once the waker's processor ran it.
					runtime.Gosched()
				}
				stop()
				waitDecoy()
				for i := range c.workers {
					wakeups += d.WorkerStats(i).Wakeups
				}
				require.NotZero(t, wakeups, "no run woke a parked worker: the test proves nothing")
				if procs == 1 {
					assert.Zero(t, d.decoy.Lured(), "with one processor no wake-up lures the decoy")
				} else {
					assert.NotZero(t, d.decoy.Lured(), "%d wake-ups and no lure", wakeups)
				}
			})
		}
	}
}

// TestNoLureAfterGOMAXPROCSDrops: a set made with several processors and run
// after GOMAXPROCS went down to 1 lures nothing, from its first run on (the
// processor count is read where a lure would happen, not cached).
func TestNoLureAfterGOMAXPROCSDrops(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	d := New(1)
	d.SetSpin(0)
	stop := serve(d, 1)
	waitDecoy := serveDecoy(d)
	runtime.GOMAXPROCS(1)
	task := tasks.CallerRuns(tasks.Func("decoy", func(int) {}))
	for range 50 {
		_, pe := run(d, task, 2)
		require.Nil(t, pe)
		runtime.Gosched()
	}
	stop()
	waitDecoy()
	require.NotZero(t, d.WorkerStats(0).Wakeups, "no run woke the parked worker: the test proves nothing")
	assert.Zero(t, d.decoy.Lured(), "wake-ups on one processor lure nothing")
}

// TestDecoyWithoutServer checks that wake-ups on a dispatcher whose decoy
// nobody serves neither block nor fail, and that Stop may be called twice.
func TestDecoyWithoutServer(t *testing.T) {
	d := New(2)
	d.SetSpin(0)
	stop := serve(d, 2)
	for range 200 {
		r := newRecorder(3, true)
		_, pe := run(d, r, 3)
		require.Nil(t, pe)
		r.check(t)
	}
	stop()
	d.Stop(2)
	assert.Zero(t, d.decoy.Lured())
}
