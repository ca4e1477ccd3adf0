package workers_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
	"github.com/workgang/workgang/workers"
)

// TestRunTeamOnDistinctWorkers: one long-lived set runs teams of every size,
// mixed with caller-runs and plain runs of other sizes; each team's members
// run on distinct worker goroutines (never the caller), pass their barriers
// together and share loops exactly once.
func TestRunTeamOnDistinctWorkers(t *testing.T) {
	for _, spin := range []time.Duration{0, 50 * time.Microsecond} {
		t.Run(fmt.Sprintf("spin=%v", spin), func(t *testing.T) {
			const max = 6
			w := workers.New("team", max, workers.WithSpin(spin))
			defer w.Close()
			rng := rand.New(rand.NewPCG(7, uint64(spin)))
			caller := goid.Get()
			for round := range 200 {
				n := 1 + rng.IntN(max)
				gs := make([]uint64, n)
				var arrived atomic.Int64
				var bad atomic.Int64
				hits := make([]atomic.Int32, 100)
				w.RunTeam("round", n, func(m *team.Member) {
					require.Less(t, m.ID(), n) // ids 0..n-1, each once: gs below
					gs[m.ID()] = goid.Get()
					for k := int64(1); k <= 3; k++ {
						arrived.Add(1)
						m.Barrier()
						if arrived.Load() != k*int64(n) {
							bad.Add(1)
						}
						m.Barrier()
					}
					m.For(len(hits), func(lo, hi int) {
						for i := lo; i < hi; i++ {
							hits[i].Add(1)
						}
					}, team.Dynamic(3))
				})
				require.Zero(t, bad.Load(), "round %d: a member left a barrier early", round)
				seen := map[uint64]bool{}
				for id, g := range gs {
					require.NotEqual(t, caller, g, "round %d: member %d ran on the caller", round, id)
					require.False(t, seen[g], "round %d: two members on one goroutine", round)
					seen[g] = true
				}
				for i := range hits {
					require.Equal(t, int32(1), hits[i].Load(), "round %d: iteration %d", round, i)
				}
				// Other runs in between, as a program mixes phases.
				w.RunN(tasks.CallerRuns(tasks.Func("between", func(int) {})), 1+rng.IntN(max))
				w.RunN(tasks.Func("plain", func(int) {}), 1+rng.IntN(max))
			}
		})
	}
}

// TestRunTeamPanics: a member that panics or calls Goexit breaks the barrier;
// RunTeam reports that member's failure (not the stopped members') as a
// *PanicError, and the set, and its cached team, stay usable.
func TestRunTeamPanics(t *testing.T) {
	w := workers.New("team-panic", 3)
	defer w.Close()
	boom := errors.New("boom")
	for _, mode := range []string{"panic", "goexit", "departed"} {
		t.Run(mode, func(t *testing.T) {
			var pe *workers.PanicError
			func() {
				defer func() {
					v := recover()
					var ok bool
					pe, ok = v.(*workers.PanicError)
					require.True(t, ok, "RunTeam panicked with %T %v", v, v)
				}()
				w.RunTeam("fail", 3, func(m *team.Member) {
					m.Barrier()
					if m.ID() == 1 {
						switch mode {
						case "panic":
							panic(boom)
						case "goexit":
							runtime.Goexit()
						default:
							return
						}
					}
					m.Barrier()
				})
			}()
			assert.Equal(t, 1, pe.Panics, "only one member's failure is reported: %v", pe)
			switch mode {
			case "panic":
				assert.ErrorIs(t, pe, boom)
				assert.Equal(t, 1, pe.Worker)
			case "goexit":
				assert.True(t, pe.Goexit)
				assert.Equal(t, 1, pe.Worker)
			default:
				assert.Contains(t, fmt.Sprint(pe.Value), "team: Barrier: member 1 returned without reaching the barrier")
			}
			var sum atomic.Int64
			w.RunTeam("after", 3, func(m *team.Member) {
				m.Barrier()
				sum.Add(int64(m.ID()))
			})
			assert.Equal(t, int64(3), sum.Load(), "the set runs teams after a failure")
		})
	}
}

func TestRunTeamArguments(t *testing.T) {
	w := workers.New("team-args", 2)
	defer w.Close()
	assert.PanicsWithValue(t, `workers: RunTeam on "team-args": nil function`, func() { w.RunTeam("x", 2, nil) })
	assert.PanicsWithValue(t, `workers: RunTeam on "team-args": n = 3 out of range [0, 2]`, func() {
		w.RunTeam("x", 3, func(*team.Member) {})
	})
}

// TestRunTeamConcurrentCallers: RunTeams from several goroutines at once never
// share a team and all complete.
func TestRunTeamConcurrentCallers(t *testing.T) {
	w := workers.New("team-conc", 2)
	defer w.Close()
	var wg sync.WaitGroup
	var total atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				var local atomic.Int64
				w.RunTeam(fmt.Sprint("g", g), 2, func(m *team.Member) {
					local.Add(1)
					m.Barrier()
					if local.Load() != 2 {
						panic("a member passed the barrier before its sibling arrived")
					}
				})
				total.Add(local.Load())
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(4*100*2), total.Load())
}

func TestRunTeamAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	w := workers.New("team-allocs", 2)
	defer w.Close()
	fn := func(m *team.Member) { m.Barrier() }
	w.RunTeam("warm", 2, fn)
	if got := testing.AllocsPerRun(200, func() { w.RunTeam("allocs", 2, fn) }); got != 0 {
		t.Errorf("RunTeam allocates %v times per run; want 0", got)
	}
}
