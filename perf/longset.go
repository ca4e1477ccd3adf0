package main

import (
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// longSet is one worker set that lives for a whole section, the way an
// embedder (a runtime, a collector) keeps one set for the life of its process:
// created at the section's full parallelism, with every worker started before
// anything is timed, and shared by every level, mode and phase the section
// runs. Runners on it do not close it; the section does, with close.
type longSet struct {
	w    *workers.Workers
	size int
}

// newLongSet creates a set of size workers and starts all of them with one
// plain run of size copies (workers are created lazily, and a long-lived set
// has seen a run at full parallelism long before the one being timed).
func newLongSet(size int) *longSet {
	w := workers.New("perf-long", size, setOptions...)
	w.RunN(tasks.Func("perf-start", emptyWork), size)
	return &longSet{w: w, size: size}
}

// close closes the set; every runner on it must be done.
func (s *longSet) close() { s.w.Close() }

// runner returns a runner of RunN(t, n) on the set; its close does nothing.
func (s *longSet) runner(n int, t tasks.Task) runner {
	return runner{run: func() { s.w.RunN(t, n) }, close: func() {}, waits: setWaits(s.w)}
}

// start returns an impl's start function that runs work on the set, plain or
// opted in to caller-runs.
func (s *longSet) start(callerRuns bool) func(size, n int, work func(int)) runner {
	return func(_, n int, work func(int)) runner {
		return s.runner(n, perfTask(work, callerRuns))
	}
}

// perfTask wraps work as the harness's task, opted in to caller-runs or not.
func perfTask(work func(int), callerRuns bool) tasks.Task {
	t := tasks.Func("perf", work)
	if callerRuns {
		return tasks.CallerRuns(t)
	}
	return t
}

// setWaits returns a function reading how w's workers obtained their copies.
func setWaits(w *workers.Workers) func() waitStats {
	return func() waitStats {
		st := w.Stats()
		return waitStats{WorkerCopies: st.WorkerCopies, Ready: st.Ready, Spun: st.Spun, Parked: st.Wakeups}
	}
}

// Names of workgang's modes on a long-lived set.
const (
	nameOneWorkgang = "1set:workgang"
	nameOneCaller   = "1set:workgang+caller"
)

// oneSetImpls returns workgang's two modes on s, as implementations for the
// tables that put them beside the fresh-set rows.
func oneSetImpls(s *longSet) []impl {
	return []impl{
		{nameOneWorkgang, "workgang RunN on ONE long-lived set created at -max with all workers started, every copy on a worker", s.start(false)},
		{nameOneCaller, "the same set, task opted in with tasks.CallerRuns (both modes and all levels share the set)", s.start(true)},
	}
}

// isWorkgang reports whether the row called name is one of workgang's modes,
// on fresh sets or on a long-lived one.
func isWorkgang(name string) bool {
	switch name {
	case nameWorkgang, nameCaller, nameOneWorkgang, nameOneCaller:
		return true
	}
	return false
}
