package openmp

import "github.com/workgang/workgang/workers"

// Hooks for what a workgang set can express only with API beyond
// RunN and ForRange. While a hook is nil the constructs that need it are
// reported as not expressible, with the reason; setting it (from an init
// function in a file of this package) is all it takes to measure them.

// RunTeam runs fn as n copies on w that run at the same time on distinct
// worker goroutines (a gang-scheduled team), each with its Member, and
// returns when all have returned. BARRIER, FOR inside a region and the
// schedules as worksharing loops inside one run need it. Nil while the set
// has no such runs.
var RunTeam func(w *workers.Workers, name string, n int, fn func(m Member))

// Member is one copy of a team run by RunTeam.
type Member interface {
	// ID is the copy's id in [0, n).
	ID() int
	// Barrier returns once every copy of the run has called it.
	Barrier()
	// For runs body over [0, n) shared out among the copies by s, each
	// iteration once, and returns after a barrier among the copies.
	For(n int, body func(lo, hi int), s Schedule)
}

// SchedKind is a worksharing loop's schedule, as OpenMP's schedule clause.
type SchedKind uint8

// The schedules of the schedule tests.
const (
	Static      SchedKind = iota // one block per copy
	StaticChunk                  // chunks dealt round robin
	Dynamic                      // chunks claimed first come first served
	Guided                       // shrinking chunks, claimed, at least Chunk
)

// Schedule is a schedule with its chunk (ignored by Static).
type Schedule struct {
	Kind  SchedKind
	Chunk int
}

// WithGuided returns ForRange's option for a guided schedule whose chunks
// are at least min iterations; nil would make the guided ForRange rows "not
// expressible".
var WithGuided func(min int) workers.RangeOption = workers.WithGuided

// rangeModes are the options that select each of ForRange's two modes, the
// caller running copies ("caller-runs", ForRange's default) and only workers
// running them ("workers-only").
var rangeModes = [2][]workers.RangeOption{nil, {workers.WithWorkersOnly()}}
