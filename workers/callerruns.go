package workers

import (
	"context"
	"runtime/trace"

	"github.com/workgang/workgang/gang"
)

// Runs on their caller alone, using no worker or dispatcher state. Inline
// ones (one copy) hold the run lock unless the set has concurrent runs, so
// they never overlap another run: runs share the worker ids users key data
// by. Busy ones hold nothing, so Close and a last release never wait for them.

// runInline runs a run of one caller-runs copy on its caller.
func (w *Workers) runInline(op string, plan gang.Plan) {
	held := !w.concurrent
	if held {
		_ = w.lockContext(context.Background(), op, true)
		defer w.mu.unlock() // after endAlone, which writes inlineHeld as its holder
	}
	if w.closed.Load() {
		w.panicClosed(op)
	}
	ran := false
	defer w.endAlone(held, false, &ran)
	p := gang.RunOnCaller(plan, 1) // returns after a panic too
	ran = true
	repanic(p)
}

// runBusy runs the n copies of a caller-runs task that found the run lock
// taken (by another run, by Close, or by the run it is nested in) on its
// caller, ids 0..n-1 in order, without waiting.
func (w *Workers) runBusy(op string, plan gang.Plan, n int) {
	if w.closed.Load() {
		w.panicClosed(op)
	}
	w.runs.Add(1)
	w.busyRuns.Add(1)
	defer asSetPanic()
	p := gang.RunOnCaller(plan, n) // returns after panics too: only a Goexit skips the rest
	w.callerCopies.Add(uint64(n))
	repanic(p)
}

// runAlone runs a loop's one copy on its caller, under the run lock if held
// (runLoop releases it); busy: the loop found the set busy.
func (w *Workers) runAlone(t loopTask, held, busy bool) {
	if busy {
		w.runs.Add(1)
		w.busyRuns.Add(1)
	}
	ran := false
	defer w.endAlone(held, busy, &ran)
	if trace.IsEnabled() {
		defer trace.StartRegion(context.Background(), t.Name()).End()
		why := "one copy planned: on the caller"
		if busy {
			why = "the set was busy: on the caller, as one copy"
		}
		trace.Log(context.Background(), "workgang", why)
	}
	t.Work(0)
	ran = true
}

// endAlone counts a run on the caller alone as it ends (*ran: its copy
// returned or panicked; else it called runtime.Goexit); held: under the run
// lock, which its caller releases after. inlineHeld has one writer, the
// lock's holder (the lock's CAS orders successive holders), so a load and a
// store suffice.
func (w *Workers) endAlone(held, busy bool, ran *bool) {
	switch {
	case busy:
		if *ran {
			w.callerCopies.Add(1)
		}
	case !*ran:
		w.inlineExits.Add(1)
	case held:
		w.inlineHeld.Store(w.inlineHeld.Load() + 1)
	default:
		w.inlineRuns.Add(1)
	}
}
