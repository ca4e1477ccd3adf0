package workers

import (
	"fmt"

	"github.com/workgang/workgang/tasks/team"
)

// RunTeam runs n copies of fn as one team, each on a worker of its own with
// a *team.Member of id 0..n-1, and returns when all returned. Members may
// meet at m.Barrier() and share loops with m.For, as OpenMP threads do in a
// parallel region. A member's panic breaks the barrier and RunTeam panics as
// RunN does. It waits for the set like any plain run.
func (w *Workers) RunTeam(name string, n int, fn func(m *team.Member)) {
	w.s("RunTeam").RunTeam(name, n, fn)
}

// RunTeam is Workers.RunTeam on a set that is not nil.
func (w *set) RunTeam(name string, n int, fn func(m *team.Member)) {
	w.check("RunTeam")
	if fn == nil {
		panic(fmt.Sprintf("workers: RunTeam on %q: nil function", w.name))
	}
	w.checkN("RunTeam", n)
	// One cached team per set, taken with a Swap so that concurrent RunTeams
	// never share one (the loser allocates its own), put back after the run
	// (not after a panic): the run's end precedes the Store, which the next
	// Swap reads, so the next user sees a finished team.
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
