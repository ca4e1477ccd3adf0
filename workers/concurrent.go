package workers

import (
	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/tasks"
)

// Runs on a set made WithConcurrentRuns that do not wait for the run lock.
// An inline run uses no worker and no dispatcher state; a busy run uses only
// the dispatcher's side slot, which is made to be used beside the run that
// holds the lock (gang's RunBeside), or, when another busy run has the slot,
// nothing but its own caller. So they may overlap with the run that holds the
// lock and with each other, and never need the lock.

// runInlineConcurrent runs the single copy of a caller-runs task on the
// caller without the run lock.
func (w *set) runInlineConcurrent(op string, t tasks.Task) {
	if w.closed.Load() {
		w.panicClosed(op)
	}
	w.inlineRuns.Add(1)
	returned := false
	defer func() {
		if !returned {
			w.inlineGoexits.Add(1) // not a caller copy, as in runInline
		}
	}()
	p := gang.RunInline(t)
	returned = true
	if p != nil {
		panic(p)
	}
}

// runBusy runs the n copies of a caller-runs task that found the run lock
// taken: by another goroutine's run, by Close, or by a run this goroutine is
// inside (a nested run). It never waits for that run. It first offers the run
// to the dispatcher's side slot, where idle workers take copies beside the
// caller (gang's RunBeside); if another busy run holds the slot, it runs all
// n copies on the caller, ids 0..n-1 in order. Either way a copy's panic does
// not stop the others, the first one is re-raised with the count once every
// copy has run, and a caller copy's runtime.Goexit proceeds once the other
// copies have run, unless a copy panicked: that panic is raised instead (as
// in a dispatched run, the caller's own Goexit is not counted as a panic).
func (w *set) runBusy(op string, plan gang.Plan, t tasks.Task, n int) {
	if w.closed.Load() {
		w.panicClosed(op)
	}
	w.runs.Add(1)
	w.busyRuns.Add(1)
	if ok, ran, p := w.d.RunBeside(plan, n); ok {
		w.sideRuns.Add(1)
		w.callerCopies.Add(uint64(ran))
		if p != nil {
			panic(p)
		}
		return
	}
	r := busyRun{one: copyOf{t: t}}
	returned := false
	defer func() {
		if !returned && r.first != nil {
			// A copy called Goexit: turn it into the panic of another.
			r.first.Panics = r.panics
			panic(r.first)
		}
	}()
	r.runFrom(0, n)
	returned = true
	w.callerCopies.Add(uint64(n))
	if r.first != nil {
		r.first.Panics = r.panics
		panic(r.first)
	}
}

// busyRun is the state of one runBusy: the first panic and the count.
type busyRun struct {
	one    copyOf
	first  *PanicError
	panics int
}

// runFrom runs copies c..n-1 in order and records their panics.
func (r *busyRun) runFrom(c, n int) {
	returned := false
	defer func() {
		if !returned {
			// Copy c called runtime.Goexit (gang.RunInline recovers
			// panics): the later copies still run, then the Goexit goes on.
			r.runFrom(c+1, n)
		}
	}()
	for ; c < n; c++ {
		r.one.c = c
		if p := gang.RunInline(&r.one); p != nil {
			p.Worker = c
			r.panics++
			if r.first == nil {
				r.first = p
			}
		}
	}
	returned = true
}

// copyOf is copy c of t as a one-copy task, for gang.RunInline, which runs
// copy 0 with the panic capture every run uses.
type copyOf struct {
	t tasks.Task
	c int
}

func (x *copyOf) Name() string { return x.t.Name() }
func (x *copyOf) Work(int)     { x.t.Work(x.c) }
