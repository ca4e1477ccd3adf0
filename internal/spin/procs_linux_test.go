package spin

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The processors counted are the process's: a refresh made on a thread
// pinned to one CPU (a worker placed by WithAffinity, or a thread someone
// else pinned) counts as many as one made anywhere else.
func TestProcsOfTheProcessNotTheThread(t *testing.T) {
	want := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	if want < 2 {
		t.Skipf("one processor (GOMAXPROCS %d, %d CPUs): a pinned thread cannot count fewer", runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
	done := make(chan int)
	go func() {
		runtime.LockOSThread() // never unlocked: the pinned thread ends with the goroutine
		var one unix.CPUSet
		one.Set(0)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Errorf("pinning the thread: %v", err)
		}
		Refresh()
		done <- Procs() // read on the pinned thread
	}()
	if got := <-done; got != want {
		t.Errorf("a refresh on a thread pinned to one CPU counts %d processors; want %d", got, want)
	}
}
