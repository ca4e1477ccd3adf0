package workers

import (
	"fmt"
	"time"
)

// Stats is a snapshot of a set's counters since New, each read atomically.
// Runs and worker copies are counted when they start, inline runs and caller
// copies when their run returns; no counter goes down.
type Stats struct {
	Runs         uint64 // every run, inline and busy ones included
	InlineRuns   uint64 // runs of one caller-runs copy
	BusyRuns     uint64 // runs that found the set busy and ran on their caller
	CallerCopies uint64 // copies run by the runs' callers
	WorkerCopies uint64 // copies run by workers

	// How workers found the runs they looked at.
	Ready   uint64 // posted before the worker looked
	Spun    uint64 // posted while the worker spun
	Parks   uint64 // the worker parked
	Wakeups uint64 // a parked worker was woken

	Created           int // worker goroutines created
	PlacementFailures int // see PlacementErrors

	// Runs that waited for the set (FIFO) and their total wait, counted
	// when the wait ends.
	Waits    uint64
	WaitTime time.Duration
}

// Stats returns the set's counters (one load per counter per worker).
func (w *set) Stats() Stats {
	ended := w.inlineRuns.Load()
	inline := ended + w.inlineExits.Load()
	s := Stats{
		Runs:         w.runs.Load() + inline,
		InlineRuns:   inline,
		BusyRuns:     w.busyRuns.Load(),
		CallerCopies: w.callerCopies.Load() + ended,
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
