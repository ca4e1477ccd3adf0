package workers_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
	"github.com/workgang/workgang/workers"
)

// Copies that may meet always meet: every call whose doc lets its copies run
// at once starts all of them within bounded time, whatever the wait policy
// reads (machineViews, and a forced one-processor view) and whatever the
// machine is (CI runs this at GOMAXPROCS=1, on a one-CPU mask and beside
// busy processes). Each call's copies wait for each other, pairwise over an
// unbuffered channel or all at a barrier; a call that does not return within
// the limit fails the test instead of hanging it.

// meetCall runs n copies on w through one call; each copy calls meet(id).
type meetCall struct {
	name string
	run  func(w *workers.Workers, n int, meet func(id int))
}

func meetCalls() []meetCall {
	return []meetCall{
		{"RunN", func(w *workers.Workers, n int, meet func(int)) {
			w.RunN(tasks.Func("meet", meet), n)
		}},
		{"Run", func(w *workers.Workers, n int, meet func(int)) {
			w.SetActiveWorkers(n)
			defer w.SetActiveWorkers(w.MaxWorkers())
			w.Run(tasks.Func("meet", meet))
		}},
		{"RunContext", func(w *workers.Workers, n int, meet func(int)) {
			err := w.RunContext(context.Background(), n, func(_ context.Context, i int) error {
				meet(i)
				return nil
			})
			if err != nil {
				panic(err)
			}
		}},
		{"RunTeam", func(w *workers.Workers, n int, meet func(int)) {
			w.RunTeam("meet", n, func(m *team.Member) { meet(m.ID()) })
		}},
	}
}

// pairwise: copy 2k and copy 2k+1 exchange a value over an unbuffered channel
// (an odd last copy meets nobody).
func pairwise(n int) func(id int) {
	chans := make([]chan int, (n+1)/2)
	for i := range chans {
		chans[i] = make(chan int)
	}
	return func(id int) {
		switch {
		case id%2 == 0 && id+1 < n:
			chans[id/2] <- id
		case id%2 == 1:
			if got := <-chans[id/2]; got != id-1 {
				panic(fmt.Sprintf("copy %d met %d", id, got))
			}
		}
	}
}

// barrier: every copy waits until all n arrived.
func barrier(n int) func(id int) {
	var wg sync.WaitGroup
	wg.Add(n)
	return func(int) {
		wg.Done()
		wg.Wait()
	}
}

func TestCopiesThatMayMeetMeet(t *testing.T) {
	views := append(machineViews(), machineView{"one processor", func() func() {
		return spin.ForceView(1, false)
	}})
	for _, v := range views {
		t.Run(v.name, func(t *testing.T) {
			undo := v.set()
			defer undo()
			w := workers.New("meet", 3)
			defer w.Close()
			for _, c := range meetCalls() {
				for _, shape := range []struct {
					name string
					meet func(n int) func(int)
				}{{"pairwise", pairwise}, {"barrier", barrier}} {
					for _, n := range []int{2, 3} {
						for round := range 5 {
							what := fmt.Sprintf("%s, %d copies meeting %s, round %d", c.name, n, shape.name, round)
							testutil.Within(t, what, 20*time.Second, func() { c.run(w, n, shape.meet(n)) })
							if t.Failed() {
								return
							}
						}
					}
				}
			}
			require.Zero(t, w.Stats().BusyRuns, "a run found the set busy")
		})
	}
}
