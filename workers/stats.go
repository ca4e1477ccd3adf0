package workers

import (
	"fmt"
	"time"
)

// Stats is a snapshot of a set's counters since New, each read atomically;
// no counter goes down. Runs and worker copies are counted as they start,
// inline runs, caller copies and waits as they end. With runtime/trace on,
// a run whose copies all ran on its caller logs why (category "workgang").
type Stats struct {
	Runs           uint64 // every run and loop
	InlineRuns     uint64 // runs and loops of one copy that ran on the caller, not busy
	BusyRuns       uint64 // runs that found the set busy and ran on their caller
	CallerOnlyRuns uint64 // runs offered to workers whose caller ran every copy
	CappedLoops    uint64 // loops run on the set whose copies were cut to GOMAXPROCS (busy loops run one copy: not counted)
	CallerCopies   uint64 // copies run by the runs' callers
	WorkerCopies   uint64 // copies run by workers

	// How workers found the runs they looked at.
	Ready   uint64 // posted before the worker looked
	Spun    uint64 // posted while the worker spun
	Parks   uint64 // the worker parked
	Wakeups uint64 // a parked worker was woken

	Created           int // worker goroutines started: those of crews a grow replaced and replacements after a runtime.Goexit included
	PlacementFailures int // see PlacementErrors

	Waits    uint64        // runs that queued for the set, those that gave up on a done context included (Close and Acquire's grow are not runs)
	WaitTime time.Duration // their total time in the queue
}

// Stats returns the set's counters.
func (w *Workers) Stats() Stats {
	w.made("Stats")
	ended := w.inlineRuns.Load() + w.inlineHeld.Load()
	inline := ended + w.inlineExits.Load()
	s := Stats{
		Runs:           w.runs.Load() + inline,
		InlineRuns:     inline,
		BusyRuns:       w.busyRuns.Load(),
		CallerOnlyRuns: w.callerOnly.Load(),
		CappedLoops:    w.cappedLoops.Load(),
		CallerCopies:   w.callerCopies.Load() + ended,
		Created:        int(w.started.Load()),
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
