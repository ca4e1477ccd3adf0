package workers

import (
	"fmt"

	"github.com/workgang/workgang/tasks/team"
)

// RunTeam runs n copies of fn as one gang-scheduled team and returns when all
// of them returned: each copy gets a *team.Member with id 0..n-1, runs on a
// worker goroutine of its own (never on the caller), and may wait for the
// others at m.Barrier() and share loops with them through m.For, the way
// OpenMP threads do inside one parallel region. A phase sequence that would
// be one fork-join per step becomes one run with a barrier per step.
//
// The copies of a plain run can wait for each other without deadlock (see
// package gang): RunTeam is RunN of a plain task, so everything RunN says
// holds, including the memory model, the panics (a copy that panics breaks
// the barrier, the others stop, and RunTeam panics with the first failure as
// a *PanicError) and when it panics. A set with concurrent runs
// (WithConcurrentRuns) runs a team only when it has n workers for it, waiting
// its turn like any plain run.
//
// RunTeam allocates nothing once a team of at least n members was used on
// the set (it keeps one).
func (w *set) RunTeam(name string, n int, fn func(m *team.Member)) {
	if fn == nil {
		panic(fmt.Sprintf("workers: RunTeam on %q: nil function", w.name))
	}
	w.checkN("RunTeam", n)
	// One cached team per set: taken with a Swap so that concurrent
	// RunTeams never share one (the loser of the race allocates its own),
	// put back after the run. The run's end is synchronized before the
	// Store, and the Swap that takes it again reads that Store, so the next
	// user sees a finished team. A run that panics does not put it back.
	c := w.team.Swap(nil)
	if c == nil {
		c = &cachedTeam{team: team.New(n)}
	} else {
		c.team.Reset(n)
	}
	c.task = teamTask{name: name, t: c.team, fn: fn}
	w.runN("RunTeam", &c.task, n)
	c.task = teamTask{} // keep neither fn nor what it captures alive
	w.team.Store(c)
}

// cachedTeam is the team a set keeps between RunTeams, with the task that runs
// it (so a run allocates neither).
type cachedTeam struct {
	team *team.Team
	task teamTask
}

// teamTask is a plain task (it does not opt in to caller-runs): copy id runs
// member id.
type teamTask struct {
	name string
	t    *team.Team
	fn   func(m *team.Member)
}

func (t *teamTask) Name() string   { return t.name }
func (t *teamTask) Work(id int)    { t.t.Run(id, t.fn) }
func (t *teamTask) String() string { return fmt.Sprintf("workers.RunTeam(%q)", t.name) }
