package gang

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/workgang/workgang/tasks"
)

// TestRunEndsOnlyAfterEveryCopy runs many short runs of mixed sizes and
// modes and checks after each that every copy ran exactly once and none is
// still running: a finisher of run k, slow between the decrement that ends
// the run and its look at the coordinator's park word, must not wake the
// coordinator's park for run k+1 (the park word carries the generation).
func TestRunEndsOnlyAfterEveryCopy(t *testing.T) {
	reps := 20
	if testing.Short() {
		reps = 4
	}
	for rep := range reps {
		d := New(2)
		stop := serve(d, 2)
		rng := rand.New(rand.NewPCG(uint64(rep), 2))
		var active atomic.Int32
		var ran [2]atomic.Int32
		work := func(id int) {
			active.Add(1)
			ran[id].Add(1)
			x := 0
			for i := range 200 {
				x += i
			}
			_ = x
			active.Add(-1)
		}
		plain := tasks.Func("p", work)
		caller := tasks.CallerRuns(tasks.Func("c", work))
		for k := range 3000 {
			n := 1 + rng.IntN(2)
			isCaller := rng.IntN(2) == 0
			if isCaller {
				run(d, caller, n)
			} else {
				run(d, plain, n)
			}
			if a := active.Load(); a != 0 {
				t.Fatalf("rep %d run %d (n=%d caller=%v gen=%d): %d copies still active after Run", rep, k, n, isCaller, d.gen, a)
			}
			for id := range n {
				if r := ran[id].Swap(0); r != 1 {

					t.Fatalf("rep %d run %d (n=%d caller=%v gen=%d): copy %d ran %d times", rep, k, n, isCaller, d.gen, id, r)
				}
			}
		}
		stop()
	}
}
