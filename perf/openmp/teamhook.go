package openmp

import (
	"github.com/workgang/workgang/tasks/team"
	"github.com/workgang/workgang/workers"
)

// The team constructs run on workgang's gang-scheduled teams.
func init() {
	RunTeam = func(w *workers.Workers, name string, n int, fn func(m Member)) {
		w.RunTeam(name, n, func(m *team.Member) { fn(teamMember{m}) })
	}
}

// teamMember is a *team.Member as a Member: ID and Barrier are its own, For
// translates the schedule.
type teamMember struct{ *team.Member }

func (m teamMember) For(n int, body func(lo, hi int), s Schedule) {
	m.Member.For(n, body, teamSchedule(s))
}

// teamSchedule returns team's schedule for s.
func teamSchedule(s Schedule) team.Schedule {
	switch s.Kind {
	case StaticChunk:
		return team.StaticChunk(s.Chunk)
	case Dynamic:
		return team.Dynamic(s.Chunk)
	case Guided:
		return team.Guided(s.Chunk)
	}
	return team.Static()
}
