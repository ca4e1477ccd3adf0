package gang

import (
	"context"
	"fmt"
	"runtime/debug"
	"runtime/trace"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/internal/catch"
	"github.com/workgang/workgang/tasks"
)

// A task's user code, apart from the protocol: Prepare, a copy's run and its
// failures (runCopy, Record, PanicError), and RunOnCaller.

// Plan is a task prepared for a run with its answer to CallerCanRun, asked
// once (a changed answer would change the workers the run needs). Only
// Prepare makes a valid Plan, so Run runs no caller copy of a plain task.
type Plan struct {
	t          tasks.Task
	callerRuns bool
	late       bool // Late
	// name is set only while tracing; a pointer keeps a Plan at four words,
	// as the inline run needs (BenchmarkRun, n=1/workers+caller).
	name *string
}

// CallerRuns reports whether the task opted in to caller-runs.
func (p Plan) CallerRuns() bool { return p.callerRuns }

// Late returns p made to leave parked workers parked until the caller's copy
// (or the run's timer) calls Wake, instead of waking them as the run starts;
// the caller claims every copy no worker has. Run ignores it without
// caller-runs.
func (p Plan) Late() Plan { p.late = true; return p }

// Name is the task's name if runtime/trace was on when Prepare made the plan
// (the copies' trace regions carry it), else "".
func (p Plan) Name() string {
	if p.name == nil {
		return ""
	}
	return *p.name
}

// Prepare asks t once whether it opts in to caller-runs and, while tracing,
// its name. A panic there is returned as a *PanicError (Worker -1, on the
// caller, Method naming it); a runtime.Goexit proceeds. It panics if t is nil.
func Prepare(t tasks.Task) (p Plan, pe *PanicError) {
	if t == nil {
		panic("gang: Prepare: nil task")
	}
	p.t = t
	if p.callerRuns, pe = askCallerCanRun(t); pe != nil {
		return Plan{}, pe
	}
	if trace.IsEnabled() {
		if panicked, v, stack := catch.Call(func() { name := t.Name(); p.name = &name }); panicked {
			return Plan{}, methodPanic(t, "Name", v, stack)
		}
	}
	return p, nil
}

// askCallerCanRun is tasks.CallerCanRun(t) with catch.Call's recover but not
// its closure (every run asks it): a panic is reported, a Goexit goes on.
func askCallerCanRun(t tasks.Task) (callerRuns bool, pe *PanicError) {
	asked := false
	defer func() {
		if !asked {
			pe = methodPanic(t, "CallerCanRun", recover(), debug.Stack())
		}
	}()
	callerRuns = tasks.CallerCanRun(t)
	asked = true
	return callerRuns, nil
}

// RunOnCaller runs the n copies of the planned task on the calling goroutine,
// ids 0..n-1 in order, using no worker or Dispatcher: for a submitter that
// must not wait for another's run, or a run of one copy. A copy's panic does
// not stop the others; the first is returned, with the count, once all have
// run. A copy's runtime.Goexit goes on once the others have run, unless one
// panicked: that panic is raised instead. It panics if the plan is the zero
// Plan, n is outside [1, tasks.MaxCopies], or n > 1 without caller-runs.
func RunOnCaller(p Plan, n int) *PanicError {
	if n == 1 && p.t != nil {
		if p.name != nil && trace.IsEnabled() {
			return runOneTraced(p)
		}
		return runOne(p.t) // the common inline run, in a frame of its own
	}
	return runAll(p, n)
}

// runOne runs the single copy of t on the caller, with catch.Call's recover
// but neither its closure nor a record (which would escape: an allocation).
func runOne(t tasks.Task) (pe *PanicError) {
	returned := false
	defer func() {
		if !returned {
			pe = &PanicError{Task: safeName(t), Worker: 0, OnCaller: true, Value: recover(), Stack: debug.Stack(), Panics: 1}
		}
	}()
	t.Work(0)
	returned = true
	return nil
}

// runOneTraced is runOne in a trace region (its own frame: runOne has no defer).
func runOneTraced(p Plan) *PanicError {
	defer trace.StartRegion(context.Background(), p.Name()).End()
	return runOne(p.t)
}

// runAll is RunOnCaller for any n.
func runAll(p Plan, n int) (pe *PanicError) {
	if p.t == nil {
		panic("gang: RunOnCaller: zero Plan (make one with Prepare)")
	}
	if n < 1 || n > tasks.MaxCopies {
		panic(fmt.Sprintf("gang: RunOnCaller: n = %d out of range [1, %d]", n, tasks.MaxCopies))
	}
	if !p.callerRuns && n > 1 { // its copies may wait for each other
		panic(fmt.Sprintf("gang: RunOnCaller: task %q did not opt in to caller-runs (n = %d)", safeName(p.t), n))
	}
	// From a pool, not the stack (see runOne); take clears it before Put.
	f := recordPool.Get().(*Record)
	normal := false
	defer func() {
		pe = f.Take()
		recordPool.Put(f)
		if !normal && pe != nil && !pe.Goexit {
			panic(pe) // another copy's panic, instead of the caller's Goexit
		}
	}()
	copiesFrom(p, 0, n, f)
	normal = true
	return nil // the deferred call sets pe
}

var recordPool = sync.Pool{New: func() any { return new(Record) }}

// copiesFrom runs copies c..n-1 of p on the caller. After a copy's Goexit,
// copies run in a deferred call would keep the frames of every later Goexit:
// the rest run aside (catch.Aside), each goroutine ended by the next Goexit.
func copiesFrom(p Plan, c, n int, f *Record) {
	returned := false
	defer func() {
		for !returned {
			next := c + 1 // a variable of its own: only a Goexit allocates
			returned = catch.Aside(func() { runCopies(p, &next, n, f) })
			c = next // the copy that exited, unless all returned
		}
	}()
	runCopies(p, &c, n, f)
	returned = true
}

// runCopies runs copies *c..n-1 of p on the caller, *c the one in progress.
func runCopies(p Plan, c *int, n int, f *Record) {
	for ; *c < n; *c++ {
		runCopy(p.t, p.Name(), *c, true, f)
	}
}

// runCopy runs copy c of t, in a trace region if name is set, and records in
// f how it failed, if it did; a Goexit then goes on unwinding.
func runCopy(t tasks.Task, name string, c int, onCaller bool, f *Record) {
	returned := false
	defer func() {
		if !returned { // catch.Call returns after a panic: a Goexit
			var stack []byte
			if !onCaller && f.KeepsGoexit() { // else not kept: no stack
				stack = debug.Stack()
			}
			capture(f, t, c, onCaller, nil, true, stack)
		}
	}()
	if name != "" && trace.IsEnabled() { // which goroutine ran the copy, how long
		defer trace.StartRegion(context.Background(), name).End()
	}
	panicked, v, stack := catch.Call(func() { t.Work(c) })
	returned = true
	if panicked {
		capture(f, t, c, onCaller, v, false, stack)
	}
}

// A Record, empty as a zero value, keeps the first failure of a run's copies
// and counts them all; a panic displaces a kept Goexit. Run and RunOnCaller
// keep one per run, as may code running copies of its own (a loop's body
// calls). Add is safe for concurrent use; Take is for after the run and its Adds.
type Record struct {
	first atomic.Pointer[PanicError]
	count atomic.Int64
}

// Add counts p and keeps it if r keeps none, or p is a panic and r keeps a
// Goexit. The adder may still write p's fields read after the run (Task).
func (r *Record) Add(p *PanicError) {
	r.count.Add(1)
	for { // the CAS makes the choice atomic against concurrent Adds
		cur := r.first.Load()
		if cur != nil && !(cur.Goexit && !p.Goexit) {
			return
		}
		if r.first.CompareAndSwap(cur, p) {
			return
		}
	}
}

// KeepsGoexit reports whether Add would keep a Goexit now (no failure kept),
// so an adder may skip the stack of one it would only count.
func (r *Record) KeepsGoexit() bool { return r.first.Load() == nil }

// Take empties r and returns its failure with Panics set to the count, or nil.
func (r *Record) Take() *PanicError {
	if r.first.Load() == nil {
		return nil
	}
	p := r.first.Swap(nil)
	p.Panics = int(r.count.Swap(0))
	return p
}

// capture records a failed copy in r; the caller's own Goexit is no failure
// to report to that caller: it goes on unwinding it.
func capture(r *Record, t tasks.Task, c int, onCaller bool, v any, goexit bool, stack []byte) {
	if goexit && onCaller {
		return
	}
	p := &PanicError{Task: "?", Worker: c, OnCaller: onCaller, Value: v, Goexit: goexit, Stack: stack}
	r.Add(p)
	// Last: a hostile Name may Goexit, leaving "?". The submitter reads Task
	// after the run's end, which this copy's retire precedes.
	p.Task = safeName(t)
}

// safeName returns t.Name(), or a description of the panic if Name panics.
func safeName(t tasks.Task) (name string) {
	defer func() {
		if v := recover(); v != nil {
			name = fmt.Sprintf("<Name panicked: %v>", v)
		}
	}()
	return t.Name()
}

// methodPanic reports a panic in task method method, outside any copy.
func methodPanic(t tasks.Task, method string, v any, stack []byte) *PanicError {
	return &PanicError{Task: safeName(t), Worker: -1, OnCaller: true, Value: v, Stack: stack, Panics: 1, Method: method}
}

// PanicError reports a panic (or a runtime.Goexit) in a copy of a task, or a
// panic in its CallerCanRun or Name, with the stack where it panicked.
type PanicError struct {
	Task     string // the task's Name ("?" if Name could not be called)
	Worker   int    // the copy's id (-1 for a panic outside any copy)
	OnCaller bool   // the panic happened on the goroutine that called Run
	Goexit   bool   // the copy called runtime.Goexit instead of panicking
	Value    any    // the value passed to panic (nil for Goexit and panic(nil))
	Stack    []byte // the panicking goroutine's stack, from debug.Stack
	Panics   int    // how many copies of the run (with Calls: body calls) panicked in all
	Method   string // the task method that panicked if not Work ("CallerCanRun", "Name")
	Calls    bool   // Panics counts a loop's body calls, not copies (set by the loop that records them)
}

// Error returns the panic value, its origin and its stack.
func (p *PanicError) Error() string {
	where := "worker"
	if p.OnCaller {
		where = "caller"
	}
	what := fmt.Sprintf("panic: %v", p.Value)
	if p.Goexit {
		what = "called runtime.Goexit"
	}
	more := ""
	if k := p.Panics - 1; k > 0 {
		unit := "copies"
		switch {
		case p.Calls && k == 1:
			unit = "call"
		case p.Calls:
			unit = "calls"
		case k == 1:
			unit = "copy"
		}
		more = fmt.Sprintf(" (and %d more %s panicked)", k, unit)
	}
	if p.Method != "" {
		return fmt.Sprintf("task %q %s (on %s) %s\n\n%s", p.Task, p.Method, where, what, p.Stack)
	}
	return fmt.Sprintf("task %q copy %d (on %s) %s%s\n\n%s", p.Task, p.Worker, where, what, more, p.Stack)
}

// Unwrap returns the panic value if it is an error (for errors.Is and As).
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}
