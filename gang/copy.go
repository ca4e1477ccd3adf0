package gang

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/trace"

	"github.com/workgang/workgang/tasks"
)

// execute runs copy c of run gen (n copies) of t, captures a panic,
// panic(nil) or Goexit, and retires the copy. handBack is set for a worker's
// copy of a plain run whose workers and coordinator outnumber the processors
// (see retire).
func (d *Dispatcher) execute(t tasks.Task, c, n int, gen uint64, onCaller, handBack bool) {
	// Registered first, so it runs last, whatever the copy or the capture
	// does (even a Goexit from a hostile Name during capture).
	defer d.retire(c, n, gen, handBack)
	runCopy(t, c, onCaller, &d.fails)
}

// runCopy runs copy c of t and records in f how it failed, if it did: a
// panic, panic(nil), a Goexit, or a panic in Name under tracing. On a Goexit
// it records it and the Goexit goes on unwinding the caller (whose deferred
// retire then runs).
func runCopy(t tasks.Task, c int, onCaller bool, f *failures) {
	returned := false
	defer func() {
		if !returned {
			// call did not return: the copy called runtime.Goexit (call
			// recovers panics and returns), or Name did, for the trace
			// region below. There is no panic to recover.
			f.capture(t, c, onCaller, nil, true, debug.Stack())
		}
	}()
	var namePanic *PanicError
	if trace.IsEnabled() {
		// One region per copy, on the goroutine that runs it, so a trace
		// shows which goroutine ran which copy and for how long. A panic
		// in Name is the copy's failure (the copy still runs, unnamed).
		var name string
		if name, namePanic = CheckedName(t); namePanic == nil {
			defer trace.StartRegion(context.Background(), name).End()
		}
	}
	panicked, v, stack := call(func() { t.Work(c) })
	returned = true
	if panicked {
		f.capture(t, c, onCaller, v, false, stack)
	} else if namePanic != nil {
		f.capture(t, c, onCaller, namePanic.Value, false, namePanic.Stack)
	}
}

// retire counts copy c of an n-copy run as finished. Each decrement is a
// read-modify-write of its group's counter, so the one that reaches zero
// comes after every other copy's decrement of that group in the counter's
// modification order and so after those copies' writes; the same holds for
// groupsLeft, and finish's store publishes it all to the coordinator. After
// its decrement a copy touches no run state: the last one may let Run
// return and the next run start.
//
// The last copy of a plain run whose workers and coordinator outnumber the
// processors, on a worker, then yields its processor once (handBack) if the
// coordinator yielded its own in its end wait (coordYielded, see waitEnd):
// the coordinator, which only waits in such a run, may then be queued on this
// very processor, and would otherwise wait for the worker's next burst of
// polls before it sees the end. The benchmark behind it is the openmp
// section's grain sweep of plain RunN at n = GOMAXPROCS in the perf harness.
func (d *Dispatcher) retire(c, n int, gen uint64, handBack bool) {
	if d.groups[c/groupSize].left.Add(-1) != 0 {
		return
	}
	if n > groupSize && d.groupsLeft.Add(-1) != 0 {
		return
	}
	d.finish(gen)
	if handBack && d.coordYielded.Load() == gen {
		runtime.Gosched()
	}
}
