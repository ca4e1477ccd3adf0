package workers

import (
	"context"

	"github.com/workgang/workgang/gang"
)

// Runs on a set made WithConcurrentRuns that do not wait for the run lock: a
// run of one caller-runs copy, and a caller-runs run that found the set busy.
// Both run every copy on their caller (gang.RunOnCaller) and use no worker
// and no dispatcher state, so they may overlap with the run that holds the
// lock and with each other, never need the lock, and end with their caller:
// nothing of them is left for Close or a last release to wait for.

// runCallerRuns runs plan, a caller-runs task's run of n copies: a single
// copy inline, on its caller; more copies through the dispatcher under the
// run lock (waited for, except on a set with concurrent runs, where a run
// that finds the set busy runs on its caller instead: runBusy).
func (w *set) runCallerRuns(op string, plan gang.Plan, n int) {
	if n == 1 {
		w.runInline(op, plan)
		return
	}
	if w.concurrent {
		// The busy check: the same CAS as lockContext's fast path.
		if !w.mu.tryLock(token(true)) {
			w.runBusy(op, plan, n)
			return
		}
	} else {
		_ = w.lockContext(context.Background(), op, true)
	}
	repanic(w.runHeld(op, plan, n))
}

// runInline runs a run of one caller-runs copy inline: no worker, no
// dispatcher, but under the run lock (not with concurrent runs), so that it
// never overlaps another run: runs share worker ids, by which users key
// per-worker scratch data. One deferred call counts the run when it ends
// (see inlineRuns) and releases the lock (BenchmarkRun, n=1/workers+caller,
// counts every call on this path).
func (w *set) runInline(op string, plan gang.Plan) {
	locked := !w.concurrent
	if locked {
		_ = w.lockContext(context.Background(), op, true)
	}
	ended := 0 // 0: a Goexit left the copy; 1: it returned or panicked; 2: nothing ran
	defer func() {
		switch {
		case ended == 0:
			w.inlineExits.Add(1)
		case ended == 2:
		case locked:
			// The lock's holder is its only writer (the lock's CAS orders
			// successive holders): a load and a store, no read-modify-write.
			w.inlineHeld.Store(w.inlineHeld.Load() + 1)
		default:
			w.inlineRuns.Add(1)
		}
		if locked {
			w.mu.unlock()
		}
	}()
	if w.closed.Load() {
		ended = 2
		w.panicClosed(op)
	}
	p := gang.RunOnCaller(plan, 1) // returns after a panic too
	ended = 1
	repanic(p)
}

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
