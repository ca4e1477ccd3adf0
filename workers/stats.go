package workers

import (
	"fmt"
	"time"
)

// Stats is a snapshot of a set's counters since New. Each counter is read
// atomically, but the snapshot as a whole is not: taken during a run, it may
// count a copy but not yet its run. Worker copies are counted when they
// start, so copies that end in runtime.Goexit are counted too; caller copies
// are counted when the run returns (or re-raises a copy's panic), so those of
// a run whose caller called Goexit are not, in every mode; no counter ever
// goes down. Runs, InlineRuns and BusyRuns count a run when it starts.
type Stats struct {
	Runs         uint64 // runs, inline ones included
	InlineRuns   uint64 // caller-runs runs of one copy, run inline on the caller
	BusyRuns     uint64 // caller-runs runs that found the set busy (WithConcurrentRuns) and ran on their caller
	CallerCopies uint64 // copies run by the goroutine that called Run (inline and busy ones included)
	WorkerCopies uint64 // copies run by worker goroutines

	// How workers learned of the runs they saw (one per run a worker looked
	// at, whether or not it got a copy of it, plus one per worker at
	// Close): Ready and Spun found the run without parking.
	Ready   uint64 // the run was already posted when the worker came to look
	Spun    uint64 // the run was posted while the worker spun
	Parks   uint64 // the worker's spin budget ran out (or demand was low) and it committed to park
	Wakeups uint64 // a parked worker was woken by a run that needed it

	Created           int // worker goroutines created
	PlacementFailures int // see PlacementErrors

	// Runs that found the set busy and waited for it (in the set's FIFO
	// line), and the total time they waited, each counted when its wait
	// ends: when it gets the set, or leaves the line because its context
	// is done (RunContext, ForRangeContext). Close's wait is not counted.
	// Waits / WaitTime is the mean wait of a run that had to wait.
	Waits    uint64
	WaitTime time.Duration
}

// Stats returns the set's counters. Reading them costs one load per counter
// per worker; the counters themselves live on per-worker cache lines, so
// counting adds no shared line to a run.
func (w *set) Stats() Stats {
	inline := w.inlineRuns.Load()
	s := Stats{
		Runs:         w.runs.Load() + inline,
		InlineRuns:   inline,
		BusyRuns:     w.busyRuns.Load(),
		CallerCopies: w.callerCopies.Load(),
		Created:      w.CreatedWorkers(),
		Waits:        w.waits.Load(),
		WaitTime:     time.Duration(w.waitNanos.Load()),
	}
	for i := range s.Created {
		ws := w.d.WorkerStats(i)
		s.WorkerCopies += ws.Copies
		s.Ready += ws.Ready
		s.Spun += ws.Spun
		s.Parks += ws.Parks
		s.Wakeups += ws.Wakeups
	}
	w.createMu.Lock()
	s.PlacementFailures = len(w.placementErrs)
	w.createMu.Unlock()
	return s
}

// String formats the snapshot as one log line.
func (s Stats) String() string {
	return fmt.Sprintf("runs=%d inline=%d busy=%d caller_copies=%d worker_copies=%d ready=%d spun=%d parks=%d wakeups=%d created=%d placement_failures=%d waits=%d wait_time=%v",
		s.Runs, s.InlineRuns, s.BusyRuns, s.CallerCopies, s.WorkerCopies, s.Ready, s.Spun, s.Parks, s.Wakeups, s.Created, s.PlacementFailures, s.Waits, s.WaitTime)
}
