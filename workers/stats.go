package workers

import (
	"fmt"
	"time"
)

// Stats is a snapshot of a set's counters since New, each read atomically.
// Runs and worker copies are counted when they start, inline runs and caller
// copies when their run returns; no counter goes down.
//
// Why a run's copies all ran on its caller although the set has workers:
// InlineRuns (it planned one copy: n = 1, a loop of one chunk, WithCopies(1),
// ActiveWorkers 1, or CappedLoops), BusyRuns (a set with concurrent runs was
// busy) or CallerOnlyRuns (its copies were offered to the workers, but the
// caller claimed every one first: workers parked, or waiting for a CPU on a
// loaded machine). runtime/trace shows the same as log messages of category
// "workgang" in the run's region.
type Stats struct {
	Runs           uint64 // every run and loop, inline and busy ones included
	InlineRuns     uint64 // runs of one caller-runs copy, on the caller
	BusyRuns       uint64 // runs that found the set busy and ran on their caller
	CallerOnlyRuns uint64 // runs offered to workers whose caller ran every copy
	CappedLoops    uint64 // loops with fewer copies than ActiveWorkers: GOMAXPROCS is smaller
	CallerCopies   uint64 // copies run by the runs' callers
	WorkerCopies   uint64 // copies run by workers

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
func (w *Workers) Stats() Stats { return w.s("Stats").Stats() }

// Stats is Workers.Stats on a set that is not nil.
func (w *set) Stats() Stats {
	ended := w.inlineRuns.Load() + w.inlineHeld.Load()
	inline := ended + w.inlineExits.Load()
	if w.crew.Load() == nil {
		return Stats{} // a zero Workers
	}
	s := Stats{
		Runs:           w.runs.Load() + inline,
		InlineRuns:     inline,
		BusyRuns:       w.busyRuns.Load(),
		CallerOnlyRuns: w.callerOnly.Load(),
		CappedLoops:    w.cappedLoops.Load(),
		CallerCopies:   w.callerCopies.Load() + ended,
		Created:        w.CreatedWorkers(),
		Waits:          w.waits.Load(),
		WaitTime:       time.Duration(w.waitNanos.Load()),
	}
	w.createMu.Lock() // the crew and the retired counters, as grow leaves them
	sum := w.retired
	w.crew.Load().addWorkerStats(&sum, int(w.created.Load()))
	s.PlacementFailures = len(w.placementErrs)
	w.createMu.Unlock()
	s.WorkerCopies, s.Ready, s.Spun, s.Parks, s.Wakeups = sum.Copies, sum.Ready, sum.Spun, sum.Parks, sum.Wakeups
	return s
}

// String formats the snapshot as one log line.
func (s Stats) String() string {
	return fmt.Sprintf("runs=%d inline=%d busy=%d caller_only=%d capped=%d caller_copies=%d worker_copies=%d ready=%d spun=%d parks=%d wakeups=%d created=%d placement_failures=%d waits=%d wait_time=%v",
		s.Runs, s.InlineRuns, s.BusyRuns, s.CallerOnlyRuns, s.CappedLoops, s.CallerCopies, s.WorkerCopies, s.Ready, s.Spun, s.Parks, s.Wakeups, s.Created, s.PlacementFailures, s.Waits, s.WaitTime)
}
