package workers

import (
	"slices"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/tasks"
)

// Runs on a set made WithConcurrentRuns that do not wait for the run lock: a
// run of one caller-runs copy, and a caller-runs run that found the set busy.
// Both run every copy on their caller (gang.RunOnCaller) and use no worker
// and no dispatcher state, so they may overlap with the run that holds the
// lock and with each other, never need the lock, and end with their caller:
// nothing of them is left for Close or a last release to wait for. A busy
// loop's rest is the exception (runBusy): a run under the lock like any.

// runBusy runs the n copies of a caller-runs task that found the run lock
// taken: by another goroutine's run, by Close, or by a run this goroutine is
// inside (a nested run). It never waits for that run: its caller runs every
// copy, ids 0..n-1 in order, and panics and Goexits as gang.RunOnCaller
// says. A loop's copies (ForRange, ForChunks, ForRangeContext, Do,
// RunContext) claim no chunk once the set looks free; the caller then takes
// the lock with its fast path's CAS (which fails while anyone waits) and runs
// the rest as any run, the workers taking part, or goes on watching if
// another goroutine took it first. Else, of two goroutines looping at once,
// one had the workers and the other ran its loop alone, ending late.
func (w *set) runBusy(op string, t tasks.Task, plan gang.Plan, n int) {
	if w.closed.Load() {
		w.panicClosed(op)
	}
	w.runs.Add(1)
	w.busyRuns.Add(1)
	// Caller copies are counted once all ran, as by every run (a Goexit
	// skips the count), each id once (a rest's copies on workers are theirs).
	defer asSetPanic()
	var l *rangeLoop
	if lt, ok := t.(interface{ loopOf() *rangeLoop }); ok {
		l = lt.loopOf()
		l.busy = &w.mu
		defer l.drain(plan, n)
	}
	p := gang.RunOnCaller(plan, n) // returns after panics too: only a Goexit skips the rest
	onWorkers := 0
	// Only a pass the watch cut short goes on (not one whose ForChunks bodies
	// stopped ranging or whose copies all failed); after a panic, on the
	// caller, in a copy of cur: Do and RunContext report the first panic's i.
	for l != nil && l.left.Swap(false) {
		if p == nil && w.mu.tryLock(token(true)) {
			l.busy = nil // before the rest is published
			onWorkers, p = w.runRest(plan, n)
		} else if p == nil {
			p = gang.RunOnCaller(plan, n)
		} else {
			l.cur = slices.Clone(l.cur)
			if q := gang.RunOnCaller(plan, n); q != nil {
				p.Panics += q.Panics // Panics counts every pass's
			}
		}
	}
	w.callerCopies.Add(uint64(n - onWorkers))
	repanic(p)
}

// runRest runs a busy loop's rest under the run lock and releases it; on the
// caller alone if the set was closed meanwhile (the loop began before Close).
func (w *set) runRest(plan gang.Plan, n int) (onWorkers int, p *gang.PanicError) {
	defer w.mu.unlock()
	if w.closed.Load() {
		return 0, gang.RunOnCaller(plan, n)
	}
	ran, p := w.d.Run(plan, n)
	return n - ran, p
}
