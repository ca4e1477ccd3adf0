package workers

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/trace"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/internal/catch"
	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/ranges"
)

// The loops (ForRange, ForChunks, ForRangeContext, Do, RunContext): one path
// for one copy and for many. A loop plans its copies and its schedule as it
// starts; then it runs as a run of those copies under the run lock, the
// caller taking part, or, with one copy, on its caller alone. What a loop
// does never depends on which: every iteration runs once, a body call that
// panics or calls runtime.Goexit ends that call only (protect), and the
// loop reports the first failure once every copy has returned.

// loop is the state of one loop call that its copies share: the claims and
// the schedule (ranges.Loop), and the failures of its body calls.
type loop struct {
	ranges.Loop
	n          int
	callerRuns bool
	// caller is the loop's caller's goroutine (goid), for OnCaller: written
	// as the loop starts, before its copies start (the run's publication, or
	// the same goroutine for a loop alone), read by record in any copy.
	caller uintptr
	fails  gang.Record
}

// loopTask is a loop's task: its copies (Work) drain the loop, calling the
// body in protect; callFailed is told of each failed call (the context
// loops cancel).
type loopTask interface {
	tasks.Task
	callFailed()
}

// Drained reports whether every iteration has been claimed.
func (l *loop) Drained() bool { return l.Claimed() >= l.n }

// plan sets the loop's schedule for n iterations and copies planned copies,
// and returns the copies that will run: never more than the chunks. The
// default schedule is ChunkSize(n, copies) per chunk, one chunk for one copy.
func (l *loop) plan(n int, r rangeConfig, copies int) int {
	l.n = n
	switch {
	case r.minChunk > 0:
		// Chunk sizes depend on the copies: reset again in the rare case of
		// fewer chunks than copies.
		l.ResetGuided(n, r.minChunk, copies)
		if c := min(copies, l.NumChunks()); c < copies {
			copies = c
			l.ResetGuided(n, r.minChunk, copies)
		}
		return copies
	case r.chunk > 0:
		l.Reset(n, r.chunk)
	case copies > 1:
		l.Reset(n, ranges.ChunkSize(n, copies))
	default:
		l.Reset(n, n)
	}
	return min(copies, l.NumChunks())
}

// copiesFor returns the copies r plans: WithCopies's (RunContext's), or
// ActiveWorkers cut to GOMAXPROCS, read as the loop starts (the scheduler's
// lock, a few ns: BenchmarkForRange); a cut is counted in Stats. The wait
// policy's view of the machine plays no part.
func (w *set) copiesFor(r rangeConfig) int {
	if r.fixed || r.copies == 1 {
		return r.copies
	}
	if p := runtime.GOMAXPROCS(0); p < r.copies {
		w.cappedLoops.Add(1)
		if trace.IsEnabled() {
			trace.Log(context.Background(), "workgang", "copies cut to GOMAXPROCS")
		}
		return p
	}
	return r.copies
}

// runLoop runs the loop of task t (its state l) over [0, n) as r plans it.
// ctx ends a wait for the set (ForRangeContext, RunContext; the others pass
// a context that is never done): it then returns ctx's cause having run
// nothing. On a set with concurrent runs
// a caller-runs loop that finds the set busy does not wait: it runs on its
// caller as one copy and holds nothing. It panics with the first failure of
// a body call.
func (w *set) runLoop(ctx context.Context, op string, t loopTask, l *loop, n int, r rangeConfig) error {
	l.callerRuns, l.caller = r.callerRuns, goid.Get()
	copies := l.plan(n, r, w.copiesFor(r))
	held, busy := false, false
	switch {
	case !w.concurrent || !r.callerRuns:
		if err := w.lockContext(ctx, op, r.callerRuns); err != nil {
			return err
		}
		held = true
	default:
		// A loop that finds the set free holds it, whatever its copies: a
		// call from its body gets the same answer with one copy as with
		// many (see nested runs in the package doc).
		if held = w.mu.tryLock(token(true)); !held {
			busy = true // one copy, on the caller
			copies = l.plan(n, r, 1)
		}
	}
	// A body call's Goexit on the caller unwinds through here once the
	// loop's copies are done (protect): it goes on, unless a call panicked.
	normal := false
	defer func() {
		if !normal {
			if p := l.take(); p != nil && !p.Goexit {
				p.Task = t.Name()
				panic(p)
			}
		}
	}()
	var pe *gang.PanicError
	if copies == 1 && r.callerRuns {
		w.runAlone(op, t, held, busy)
	} else {
		plan, _ := gang.Prepare(t) // a loop task's CallerCanRun and Name read its fields: they cannot fail
		pe = w.runHeld(op, plan, copies)
	}
	normal = true
	if p := l.take(); p != nil {
		p.Task = t.Name()
		panic(p)
	}
	repanic(pe) // only what the loop did not record (it records every body call's failure)
	return nil
}

// runAlone runs a loop's one copy on its caller, under the run lock if held
// (released when it ends); busy: the loop found the set busy. It counts the
// run as runBusy counts its runs, or as runInline does (endInline).
func (w *set) runAlone(op string, t loopTask, held, busy bool) {
	if w.closed.Load() {
		w.endClosed(op, held)
	}
	if busy {
		w.startBusy()
	}
	ran := false
	defer func() {
		switch {
		case !busy:
			w.endInline(held, ran)
		case ran:
			w.callerCopies.Add(1) // once it ran, as by every run
		}
		if held {
			w.mu.unlock()
		}
	}()
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

// protect runs f, which makes body calls of copy c of loop task t, and
// reports whether it returned; *id names the call in progress (the copy, or
// Do's and RunContext's i) when one fails. A panic is recorded and protect
// returns false, so its caller goes on claiming in a new pass; a
// runtime.Goexit is recorded, the copy drains the rest of the loop in the
// deferred call, and the Goexit goes on. Either way t is told (callFailed),
// and every iteration still runs. A copy protects a pass over its chunks,
// not each call: a chunk then costs its claim and its call, with no deferred
// call of its own (BenchmarkForRange, chunk=1).
func (l *loop) protect(t loopTask, c int, id *int, f func()) (returned bool) {
	exited := true
	defer func() {
		if exited { // call does not return after a Goexit
			l.record(*id, nil, true, debug.Stack())
			t.callFailed()
			t.Work(c)
		}
	}()
	panicked, v, stack := catch.Call(f)
	exited = false
	if panicked {
		l.record(*id, v, false, stack)
		t.callFailed()
	}
	return !panicked
}

// record records a failed body call (id: the copy, or Do's and RunContext's
// i) in the loop's gang.Record, as a copy of a run reports itself: on the
// caller if the loop's caller made the call.
func (l *loop) record(id int, v any, goexit bool, stack []byte) {
	l.fails.Add(&gang.PanicError{Worker: id, OnCaller: goid.Get() == l.caller, Value: v, Goexit: goexit, Stack: stack})
}

// take returns the loop's first failure with the count, or nil, and clears
// the record; its caller runs after the loop's copies, which every record
// precedes.
func (l *loop) take() *PanicError { return (*PanicError)(l.fails.Take()) }
