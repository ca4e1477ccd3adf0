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
// and releases the lock (BenchmarkRun, n=1/workers+caller, counts every call
// on this path).
func (w *set) runInline(op string, plan gang.Plan) {
	held := !w.concurrent
	if held {
		_ = w.lockContext(context.Background(), op, true)
	}
	if w.closed.Load() {
		w.endClosed(op, held)
	}
	ran := false
	defer func() {
		w.endInline(held, ran)
		if held {
			w.mu.unlock()
		}
	}()
	p := gang.RunOnCaller(plan, 1) // returns after a panic too
	ran = true
	repanic(p)
}

// startBusy counts a run that found the set busy (runBusy, and a loop's:
// runAlone) as it starts.
func (w *set) startBusy() {
	w.runs.Add(1)
	w.busyRuns.Add(1)
}

// endClosed releases the run lock if held and panics: the set is closed.
func (w *set) endClosed(op string, held bool) {
	if held {
		w.mu.unlock()
	}
	w.panicClosed(op)
}

// endInline counts an inline run (one copy, on its caller, not busy) as it
// ends: as ended (ran: it returned or panicked), or as exited after a
// runtime.Goexit. The run lock's holder is inlineHeld's only writer (the
// lock's CAS orders successive holders): a load and a store, no
// read-modify-write (see inlineRuns). Small enough to inline into the
// deferred calls of runInline and runAlone (BenchmarkRun, n=1/workers+caller).
func (w *set) endInline(held, ran bool) {
	switch {
	case !ran:
		w.inlineExits.Add(1)
	case held:
		w.inlineHeld.Store(w.inlineHeld.Load() + 1)
	default:
		w.inlineRuns.Add(1)
	}
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
	w.startBusy()
	defer asSetPanic()
	p := gang.RunOnCaller(plan, n) // returns after panics too: only a Goexit skips the rest
	w.callerCopies.Add(uint64(n))  // once all ran, as by every run
	repanic(p)
}
