//go:build linux

package workers_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

func TestAffinityPinsWorkers(t *testing.T) {
	var allowed unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &allowed))
	first := -1
	for c := 0; first < 0; c++ {
		if allowed.IsSet(c) {
			first = c
		}
	}
	w := workers.New("pinned", 2, workers.WithAffinity(first))
	defer w.Close()
	var bad atomic.Int32
	w.RunN(tasks.Func("where", func(int) {
		var set unix.CPUSet
		if unix.SchedGetaffinity(0, &set) != nil || set.Count() != 1 || !set.IsSet(first) {
			bad.Add(1)
		}
	}), 2)
	assert.Zero(t, bad.Load(), "a worker's thread is not pinned to CPU %d", first)
	assert.Empty(t, w.PlacementErrors())
}

func TestAffinityFailureIsReportedNotFatal(t *testing.T) {
	w := workers.New("misplaced", 2, workers.WithAffinity(4095))
	defer w.Close()
	runOnEveryWorker(w, 2) // both workers have started (and tried to pin themselves)
	errs := w.PlacementErrors()
	require.Len(t, errs, 2)
	assert.Contains(t, errs[0].Error(), `workers: "misplaced" worker`)
	assert.Contains(t, errs[0].Error(), "CPU 4095")
	assert.Equal(t, 2, w.Stats().PlacementFailures)
}

func TestNiceAppliesToWorkerThreads(t *testing.T) {
	w := workers.New("nice", 2, workers.WithNice(7))
	defer w.Close()
	var got [2]atomic.Int64
	w.RunN(tasks.Func("prio", func(id int) {
		// The raw syscall returns 20 - nice.
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
		if err != nil {
			prio = -1000
		}
		got[id].Store(int64(20 - prio))
	}), 2)
	assert.Empty(t, w.PlacementErrors())
	assert.Equal(t, int64(7), got[0].Load())
	assert.Equal(t, int64(7), got[1].Load())
}

// TestPlacementErrorsCompleteAfterFirstRun: a worker applies its placement
// before the run that created it returns, so PlacementErrors is complete
// right after it (it once was not, at GOMAXPROCS = 1).
func TestPlacementErrorsCompleteAfterFirstRun(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	for range 20 {
		w := workers.New("placed-late", 2, workers.WithAffinity(4095))
		w.RunN(tasks.CallerRuns(tasks.Func("x", func(int) {})), 2) // the caller may run both copies
		assert.Len(t, w.PlacementErrors(), 1, "right after the run that created worker 0")
		w.Close()
	}
}

// TestLockOSThreadKeepsEachWorkerOnItsThread checks WithLockOSThread's
// promise: a worker goroutine runs every copy it takes on the same OS
// thread. The copies sleep first (the goroutine leaves its thread), and
// between runs the test goroutine locks and unlocks a thread of its own, so
// an unlocked worker would be likely to come back on another thread over
// 100 runs (it does: the test fails without the option).
func TestLockOSThreadKeepsEachWorkerOnItsThread(t *testing.T) {
	w := workers.New("locked", 2, workers.WithLockOSThread())
	defer w.Close()
	var mu sync.Mutex
	threadOf := map[uint64]int{} // worker goroutine -> its thread
	moved := 0
	where := tasks.Func("where", func(int) {
		time.Sleep(50 * time.Microsecond) // park: an unlocked goroutine may resume on any thread
		g, tid := goid.Get(), unix.Gettid()
		mu.Lock()
		defer mu.Unlock()
		if old, ok := threadOf[g]; ok && old != tid {
			moved++
		}
		threadOf[g] = tid
	})
	for range 100 {
		w.RunN(where, 2)
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			close(done)
		}()
		<-done
	}
	assert.Zero(t, moved, "a worker ran a copy on another thread than before")
	assert.NotEmpty(t, threadOf)
	assert.LessOrEqual(t, len(threadOf), 2, "only the two workers ran copies")
	assert.Empty(t, w.PlacementErrors())
}
