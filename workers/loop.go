package workers

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/internal/catch"
	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/ranges"
)

// loop is the state one loop call's copies share: the claims and schedule
// (ranges.Loop) and its body calls' failures. It runs as a run of its copies
// under the run lock, or as one copy on its caller alone; either way every
// iteration runs once, and the first failure is reported after all copies.
type loop struct {
	ranges.Loop
	n          int
	callerRuns bool
	// caller is the goid that runs the caller's copy, for OnCaller: the
	// loop's caller, stored before the run (which publishes it), or its
	// stand-in after a Goexit (standIn); loaded by record in any copy. An
	// atomic: a hostile ForChunks body's escaped iterator may record from
	// another goroutine while a stand-in stores it.
	caller atomic.Uint64
	fails  gang.Record
	// late is a late run's dispatcher (spin.Late) until its caller decided
	// whether to wake the workers early (claimed); lateCopy is the caller's
	// copy (-1 if none), started its start; all written before the run. late
	// is atomic: a hostile ForChunks body may claim from any goroutine.
	late     atomic.Pointer[gang.Dispatcher]
	lateCopy int
	started  time.Time
}

// claimed is called after each chunk copy c claims (it inlines): on the
// caller's copy of a late run, it asks the policy, once, whether to wake the
// workers now; the dispatcher's timer wakes them by spin.LateBound anyway.
func (l *loop) claimed(c int) {
	if c == l.lateCopy {
		l.claimedLate()
	}
}
func (l *loop) claimedLate() {
	d := l.late.Load()
	if d == nil {
		return
	}
	decided, wake := spin.LateWake(time.Since(l.started), l.Claimed(), l.n)
	if decided && l.late.CompareAndSwap(d, nil) && wake {
		d.Wake()
	}
}

// loopTask is a loop's task; protect tells callFailed of each failed call.
type loopTask interface {
	tasks.Task
	callFailed()
}

// Drained reports whether every iteration has been claimed.
func (l *loop) Drained() bool { return l.Claimed() >= l.n }

// plan sets the schedule for n iterations and copies copies, and returns the
// copies that will run: never more than the chunks.
func (l *loop) plan(n int, r rangeConfig, copies int) int {
	l.n = n
	switch {
	case r.minChunk > 0: // guided sizes depend on the copies: fewer chunks, reset
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

// runLoop runs the loop of task t (its state l) over [0, n) as r plans it,
// and panics with the first failure of a body call. If ctx is done while it
// waits for the set, it returns ctx's cause having run nothing.
func (w *Workers) runLoop(ctx context.Context, op string, t loopTask, l *loop, n int, r rangeConfig) error {
	l.callerRuns, l.lateCopy = r.callerRuns, -1
	l.caller.Store(goid.Get())
	copies, capped := r.copies, false
	if !r.fixed && copies > 1 {
		if p := runtime.GOMAXPROCS(0); p < copies { // ActiveWorkers cut to GOMAXPROCS
			copies, capped = p, true
		}
	}
	copies = l.plan(n, r, copies)
	// A caller-runs loop holds a concurrent set if free, whatever its copies,
	// so a call from its body nests the same with one copy as with many.
	held, busy := false, false
	if !w.concurrent || !r.callerRuns {
		if err := w.lockContext(ctx, op, r.callerRuns); err != nil {
			return err
		}
		held = true
	} else if held = w.mu.tryLock(token(true)); !held {
		busy = true
		copies = l.plan(n, r, 1)
	}
	if capped && !busy { // a busy loop runs one copy whatever GOMAXPROCS
		w.cappedLoops.Add(1)
		if trace.IsEnabled() {
			trace.Log(context.Background(), "workgang", "copies cut to GOMAXPROCS")
		}
	}
	if held {
		defer w.mu.unlock() // last: drain runs under the lock
	}
	w.stillOpen(op)
	// A body call's Goexit on the caller unwinds here after the copies (gang
	// waits for them): run the chunks left; go on unless a call panicked.
	normal := false
	defer func() {
		if !normal {
			w.drain(op, t, l, copies)
			if p := l.take(); p != nil && !p.Goexit {
				p.Task = t.Name()
				panic(p)
			}
		}
	}()
	var pe *gang.PanicError
	if copies == 1 && r.callerRuns {
		w.runAlone(t, held, busy)
	} else {
		plan, _ := gang.Prepare(t) // a loop task's CallerCanRun and Name cannot fail
		if r.callerRuns && spin.Late() {
			// The policy decides when the workers wake (claimed, and the
			// dispatcher's timer); the caller claims every copy no worker has.
			plan = plan.Late()
			l.lateCopy, l.started = copies-1, time.Now()
			l.late.Store(w.crew.Load().d)
			defer l.late.Store(nil)
		}
		pe = w.runHeld(op, plan, copies)
		l.late.Store(nil) // the run ended: a drain's claims ask nothing
	}
	if pe != nil { // a worker copy's Goexit
		w.drain(op, t, l, copies)
	}
	normal = true
	if p := l.take(); p != nil {
		p.Task = t.Name()
		panic(p)
	}
	repanic(pe) // what the loop did not record
	return nil
}

// drain runs the chunks that copies ended by runtime.Goexit left. A goroutine
// after a Goexit runs only deferred calls, above its frames: claiming there
// would keep the frames of every Goexit. So the chunks left run as the
// caller's copy (copies-1) on fresh goroutines, each ended by the next
// Goexit, or, off the caller, in runs of their own on the workers.
func (w *Workers) drain(op string, t loopTask, l *loop, copies int) {
	for exited := true; exited && !l.Drained(); {
		if l.callerRuns {
			exited = !w.standIn(t, l, copies-1)
			continue
		}
		plan, _ := gang.Prepare(t) // a plain run, as the loop's
		w.ensureCreated(op, copies)
		_, pe := w.crew.Load().d.Run(plan, copies)
		exited = pe != nil // a loop's copies fail only by Goexit
	}
}

// standIn runs copy c of t on a new goroutine that stands in for the loop's
// caller, waits for it, and reports whether it returned (catch.Aside). It is
// the caller for OnCaller and, while it runs, the run lock's holder if the
// caller holds it, so a nested run from it panics as the caller's would. The
// caller, waiting, can neither unlock nor act meanwhile.
func (w *Workers) standIn(t loopTask, l *loop, c int) bool {
	caller, self, held := l.caller.Load(), uint64(0), false
	returned := catch.Aside(func() {
		self = goid.Get()
		l.caller.Store(self)
		held = w.mu.handOver(caller, self)
		t.Work(c)
	})
	if held {
		w.mu.handOver(self, caller)
	}
	return returned
}

// protect runs f, which makes body calls of t, and reports whether it
// returned; *id names the call in progress (the copy, or the i). A panic is
// recorded and the copy goes on in a new pass; a Goexit is recorded and ends
// the copy. Protecting a pass, not each call, keeps defers out of chunks.
func (l *loop) protect(t loopTask, id *int, f func()) (returned bool) {
	exited := true
	defer func() {
		if exited {
			var stack []byte
			if l.fails.KeepsGoexit() { // else only counted: no stack
				stack = debug.Stack()
			}
			l.record(*id, nil, true, stack)
			t.callFailed()
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

// record records a failed body call as a failed copy of a run is recorded.
func (l *loop) record(id int, v any, goexit bool, stack []byte) {
	l.fails.Add(&gang.PanicError{Worker: id, OnCaller: goid.Get() == l.caller.Load(), Value: v, Goexit: goexit, Stack: stack, Calls: true})
}

// take returns and clears the loop's first failure, or nil, after the copies.
func (l *loop) take() *PanicError { return (*PanicError)(l.fails.Take()) }
