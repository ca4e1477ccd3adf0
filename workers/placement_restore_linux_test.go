//go:build linux

package workers

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/workgang/workgang/tasks"
)

// threadState is what placement changes on the calling thread.
type threadState struct {
	cpus unix.CPUSet
	nice int
}

func readThread(t *testing.T) threadState {
	var s threadState
	require.NoError(t, unix.SchedGetaffinity(0, &s.cpus))
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	require.NoError(t, err)
	s.nice = 20 - prio // the raw syscall returns 20 - nice
	return s
}

// placementFor returns a placement that changes both settings of a thread in
// state s: affinity to its last allowed CPU only, nice raised by 3 (raising
// needs no privilege).
func placementFor(t *testing.T, s threadState) (p placement, cpu, nice int) {
	cpu = -1
	for c := range len(s.cpus) * 64 {
		if s.cpus.IsSet(c) {
			cpu = c
		}
	}
	require.GreaterOrEqual(t, cpu, 0)
	nice = min(s.nice+3, 19)
	if nice == s.nice {
		t.Skipf("thread nice is already %d", s.nice)
	}
	return placement{lockThread: true, affinity: true, cpus: []int{cpu}, nice: &nice}, cpu, nice
}

// onLockedThread runs f on a goroutine locked to its own OS thread. If f
// reports that the thread is back to its original state, the thread is
// unlocked and returns to the scheduler's pool, as the main thread would;
// otherwise it stays locked and ends with the goroutine.
func onLockedThread(f func() (clean bool)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if f() {
			runtime.UnlockOSThread()
		}
	}()
	<-done
}

// privileged reports whether this process may lower a thread's nice value,
// which restoring a raised one needs.
func privileged() bool {
	var lim unix.Rlimit
	return unix.Geteuid() == 0 || (unix.Getrlimit(unix.RLIMIT_NICE, &lim) == nil && lim.Cur > 20)
}

// checkRestored compares the thread's state with orig; without privilege a
// raised nice value cannot be lowered again, and restore must say so.
func checkRestored(t *testing.T, orig threadState, restoreErrs []error) bool {
	now := readThread(t)
	assert.Equal(t, orig.cpus, now.cpus, "affinity restored")
	if privileged() {
		assert.Empty(t, restoreErrs)
		assert.Equal(t, orig.nice, now.nice, "nice restored")
	} else if now.nice != orig.nice {
		require.NotEmpty(t, restoreErrs, "a nice value left raised must be reported")
		assert.Contains(t, restoreErrs[0].Error(), "restoring nice")
	}
	return !t.Failed() && now == orig
}

// applyPlacement's restore puts the thread's affinity and nice value back, so
// a worker that ran on the main thread leaves no placement behind.
func TestPlacementRestore(t *testing.T) {
	onLockedThread(func() bool {
		orig := readThread(t)
		p, cpu, nice := placementFor(t, orig)
		restore, errs := applyPlacement(&p, 0)
		require.Empty(t, errs)
		placed := readThread(t)
		assert.Equal(t, 1, placed.cpus.Count())
		assert.True(t, placed.cpus.IsSet(cpu), "pinned to CPU %d", cpu)
		assert.Equal(t, nice, placed.nice, "reniced")
		return checkRestored(t, orig, restore())
	})
}

// A failed setting is not restored (there is nothing to undo), and restore
// still undoes the ones that took.
func TestPlacementRestorePartial(t *testing.T) {
	onLockedThread(func() bool {
		orig := readThread(t)
		nice := min(orig.nice+2, 19)
		p := placement{lockThread: true, affinity: true, cpus: []int{4095}, nice: &nice}
		restore, errs := applyPlacement(&p, 0)
		require.Len(t, errs, 1)
		assert.Contains(t, errs[0].Error(), "CPU 4095")
		assert.Equal(t, orig.cpus, readThread(t).cpus, "a failed pin changes nothing")
		return checkRestored(t, orig, restore())
	})
}

// A worker whose goroutine runs on a thread that outlives it (the main
// thread, in a real process) leaves that thread as it found it. The worker
// body runs here on a goroutine locked to the test's own thread; a copy
// checks the placement took, Close stops the worker, and the thread is
// checked after the body returned.
//
// This drives the worker body directly, so it knows how workers.go creates a
// worker (the crew's workers slot, created, wg and work(d, i, wk, first)).
func TestWorkerRestoresThreadOnExit(t *testing.T) {
	var orig threadState
	onLockedThread(func() bool { orig = readThread(t); return true })
	p, cpu, nice := placementFor(t, orig)
	w := New("main-thread", 1, WithAffinity(cpu), WithNice(nice))
	require.Equal(t, p.cpus, w.place.cpus)

	wk := &worker{placed: make(chan struct{})}
	c := w.crew.Load()
	c.workers[0].Store(wk)
	w.wg.Add(1)
	w.created.Store(1)
	bodyDone := make(chan struct{})
	var tid int
	go onLockedThread(func() bool {
		defer close(bodyDone)
		tid = unix.Gettid()
		orig = readThread(t)
		w.work(c.d, 0, wk, true) // returns when Close stops the worker
		runtime.UnlockOSThread() // work's own lock; ours is undone by onLockedThread
		return checkRestored(t, orig, w.PlacementErrors())
	})
	var during threadState
	var copyTid int
	w.RunN(tasks.Func("where", func(int) {
		copyTid = unix.Gettid()
		during = readThread(t)
	}), 1)
	assert.Equal(t, tid, copyTid, "the copy ran on the worker's thread")
	assert.Equal(t, 1, during.cpus.Count(), "pinned while running")
	assert.Equal(t, nice, during.nice, "reniced while running")
	w.Close()
	<-bodyDone
}
