package workers

import "github.com/workgang/workgang/gang"

// Runs on a set made WithConcurrentRuns that do not wait for the run lock: a
// run of one caller-runs copy, and a caller-runs run that found the set busy.
// Both run every copy on their caller (gang.RunOnCaller) and use no worker
// and no dispatcher state, so they may overlap with the run that holds the
// lock and with each other, never need the lock, and end with their caller:
// nothing of them is left for Close or a last release to wait for.

// runBusy runs the n copies of a caller-runs task that found the run lock
// taken: by another goroutine's run, by Close, or by a run this goroutine is
// inside (a nested run). It never waits for that run: its caller runs every
// copy, ids 0..n-1 in order, and panics and Goexits as gang.RunOnCaller
// says. (A loop that finds the set busy runs as one copy: runLoop.)
func (w *set) runBusy(op string, plan gang.Plan, n int) {
	if w.closed.Load() {
		w.panicClosed(op)
	}
	w.runs.Add(1)
	w.busyRuns.Add(1)
	defer asSetPanic()
	p := gang.RunOnCaller(plan, n) // returns after panics too: only a Goexit skips the rest
	w.callerCopies.Add(uint64(n))  // once all ran, as by every run
	repanic(p)
}
