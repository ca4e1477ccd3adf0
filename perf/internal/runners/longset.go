package runners

import (
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// LongSet is one worker set that lives for a whole section, the way an
// embedder (a runtime, a collector) keeps one set for the life of its process:
// created at the section's full parallelism, with every worker started before
// anything is timed, and shared by every level, mode and phase the section
// runs. Runners on it do not close it; the section does, with Close.
type LongSet struct {
	W    *workers.Workers
	Size int
}

// NewLongSet creates a set of size workers and starts all of them with one
// plain run of size copies (workers are created lazily, and a long-lived set
// has seen a run at full parallelism long before the one being timed).
func NewLongSet(size int) *LongSet {
	w := workers.New("perf-long", size, setOptions...)
	w.RunN(tasks.Func("perf-start", Empty), size)
	return &LongSet{W: w, Size: size}
}

// Close closes the set; every runner on it must be done.
func (s *LongSet) Close() { s.W.Close() }

// Runner returns a runner of RunN(t, n) on the set; its Close does nothing.
func (s *LongSet) Runner(n int, t tasks.Task) Runner {
	return Runner{Run: func() { s.W.RunN(t, n) }, Close: func() {}, Waits: SetWaits(s.W)}
}

// start returns an impl's start function that runs work on the set, plain or
// opted in to caller-runs.
func (s *LongSet) start(callerRuns bool) func(size, n int, work func(int)) Runner {
	return func(_, n int, work func(int)) Runner {
		return s.Runner(n, Task(work, callerRuns))
	}
}

// Task wraps work as the harness's task, opted in to caller-runs or not.
func Task(work func(int), callerRuns bool) tasks.Task {
	t := tasks.Func("perf", work)
	if callerRuns {
		return tasks.CallerRuns(t)
	}
	return t
}

// SetWaits returns a function reading how w's workers obtained their copies.
func SetWaits(w *workers.Workers) func() WaitStats {
	return func() WaitStats {
		st := w.Stats()
		return WaitStats{WorkerCopies: st.WorkerCopies, Ready: st.Ready, Spun: st.Spun, Parked: st.Wakeups}
	}
}

// Names of workgang's modes on a long-lived set.
const (
	NameOneWorkgang = "1set:workgang"
	NameOneCaller   = "1set:workgang+caller"
)

// OneSetImpls returns workgang's two modes on s, as implementations for the
// tables that put them beside the fresh-set rows.
func OneSetImpls(s *LongSet) []Impl {
	return []Impl{
		{NameOneWorkgang, "workgang RunN on ONE long-lived set created at -max with all workers started, every copy on a worker", s.start(false)},
		{NameOneCaller, "the same set, task opted in with tasks.CallerRuns (both modes and all levels share the set)", s.start(true)},
	}
}

// IsWorkgang reports whether the row called name is one of workgang's modes,
// on fresh sets or on a long-lived one.
func IsWorkgang(name string) bool {
	switch name {
	case NameWorkgang, NameCaller, NameOneWorkgang, NameOneCaller:
		return true
	}
	return false
}
