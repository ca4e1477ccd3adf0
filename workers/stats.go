package workers

import "fmt"

// Stats is a snapshot of a set's counters since New. Each counter is read
// atomically, but the snapshot as a whole is not: taken during a run, it may
// count a copy as run but not yet its run. Copies that end in runtime.Goexit
// are not counted (on a worker the goroutine dies before counting; on the
// caller, Run never returns its count), nor are the other caller copies of a
// run whose caller called Goexit.
type Stats struct {
	Runs         uint64 // runs, inline ones included
	InlineRuns   uint64 // caller-runs runs of one copy, run inline on the caller
	CallerCopies uint64 // copies run by the goroutine that called Run (inline ones included)
	WorkerCopies uint64 // copies run by worker goroutines

	// How workers obtained their start permits (one per copy, plus one per
	// worker at Close): Ready and Spun waits found work without parking.
	Ready   uint64 // a copy was waiting when the worker came to look
	Spun    uint64 // a copy arrived while the worker spun
	Parks   uint64 // the spin budget ran out and the worker committed to park
	Wakeups uint64 // a parked worker was woken by a run's signal

	Created           int // worker goroutines created
	PlacementFailures int // see PlacementErrors
}

// Stats returns the set's counters. Reading them costs one load per counter
// per worker; the counters themselves live on per-worker cache lines, so
// counting adds no shared line to a run.
func (w *Workers) Stats() Stats {
	inline := w.inlineRuns.Load()
	s := Stats{
		Runs:         w.runs.Load() + inline,
		InlineRuns:   inline,
		CallerCopies: w.callerCopies.Load() + inline,
		Created:      w.CreatedWorkers(),
	}
	for i := range s.Created {
		wk := w.workers[i].Load()
		s.WorkerCopies += wk.copies.Load()
		s.Ready += wk.ready.Load()
		s.Spun += wk.spun.Load()
		s.Parks += wk.parks.Load()
		s.Wakeups += wk.wakeups.Load()
	}
	w.createMu.Lock()
	s.PlacementFailures = len(w.placementErrs)
	w.createMu.Unlock()
	return s
}

// String formats the snapshot as one log line.
func (s Stats) String() string {
	return fmt.Sprintf("runs=%d inline=%d caller_copies=%d worker_copies=%d ready=%d spun=%d parks=%d wakeups=%d created=%d placement_failures=%d",
		s.Runs, s.InlineRuns, s.CallerCopies, s.WorkerCopies, s.Ready, s.Spun, s.Parks, s.Wakeups, s.Created, s.PlacementFailures)
}
