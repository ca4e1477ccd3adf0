package workers

import (
	"fmt"

	"github.com/workgang/workgang/tasks/team"
)

// RunTeam runs n copies of fn as a team, each on a worker of its own with a
// *team.Member of id 0..n-1 (Barrier, For), and returns when all returned.
// It waits for the set, returns at once for n = 0 and panics as RunN does
// for a plain task; a member's panic breaks the barrier.
func (w *Workers) RunTeam(name string, n int, fn func(m *team.Member)) {
	w.check("RunTeam")
	if fn == nil {
		panic(fmt.Sprintf("workers: RunTeam on %q: nil function", w.name))
	}
	if n == 0 {
		return
	}
	w.checkN("RunTeam", n)
	// One cached task per set, taken by a Swap (concurrent RunTeams never
	// share it) and put back after the run (not a panic): the run's end
	// precedes the Store the next Swap reads, so it finds a finished team.
	c := w.team.Swap(nil)
	if c == nil {
		c = &teamTask{t: team.New(n)}
	} else {
		c.t.Reset(n)
	}
	c.name, c.fn = name, fn
	w.runN("RunTeam", c, n)
	c.name, c.fn = "", nil // keep neither fn nor what it captures alive
	w.team.Store(c)
}

// teamTask is a plain task, copy id running member id, that the set keeps
// between RunTeams so a run allocates nothing.
type teamTask struct {
	name string
	t    *team.Team
	fn   func(m *team.Member)
}

func (t *teamTask) Name() string { return t.name }
func (t *teamTask) Work(id int)  { t.t.Run(id, t.fn) }
