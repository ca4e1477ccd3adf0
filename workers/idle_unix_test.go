//go:build unix

package workers_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestIdleSetBurnsNoCPU: after its spin budget, an idle set parks. Over one
// second of idleness the whole process may use only a sliver of CPU; a
// worker that kept spinning would use about a full second per worker.
func TestIdleSetBurnsNoCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a second")
	}
	w := workers.New("idle", 4)
	defer w.Close()
	for range 1000 {
		w.Run(tasks.Func("warm", func(int) {}))
	}
	time.Sleep(50 * time.Millisecond) // let every spin budget (µs) run out
	before := processCPU(t)
	time.Sleep(time.Second)
	used := processCPU(t) - before
	t.Logf("process CPU over 1 s idle: %v", used)
	require.Less(t, used, 100*time.Millisecond, "an idle set is burning CPU")
}
