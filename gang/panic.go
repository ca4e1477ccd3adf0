package gang

import (
	"fmt"
	"sync/atomic"

	"github.com/workgang/workgang/tasks"
)

// failures is a run's panic record: its first panic and how many copies
// failed; the dispatcher's is for its current run, RunOnCaller's per call.
type failures struct {
	first atomic.Pointer[PanicError]
	count atomic.Int64
}

// capture records a failed copy.
func (f *failures) capture(t tasks.Task, c int, onCaller bool, v any, goexit bool, stack []byte) {
	if goexit && onCaller {
		// The caller's own Goexit goes on unwinding the caller: it is not a
		// failure to report to that same caller.
		return
	}
	p := &PanicError{Task: "?", Worker: c, OnCaller: onCaller, Value: v, Goexit: goexit, Stack: stack}
	f.count.Add(1)
	// Keep the first panic, but a real panic displaces a recorded Goexit; the
	// CAS loop makes the choice atomic against other copies capturing at once.
	for {
		cur := f.first.Load()
		if cur != nil && !(cur.Goexit && !p.Goexit) {
			break
		}
		if f.first.CompareAndSwap(cur, p) {
			break
		}
	}
	// Last, because a hostile Name may panic (caught) or Goexit (then the
	// record above stands, with "?" for the name). The run's submitter reads
	// Task after the run's end, which this copy's retire precedes.
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

// methodPanic reports a panic in task method method (not Work), on the
// caller, outside any copy.
func methodPanic(t tasks.Task, method string, v any, stack []byte) *PanicError {
	return &PanicError{Task: safeName(t), Worker: -1, OnCaller: true, Value: v, Stack: stack, Panics: 1, Method: method}
}

// take returns the run's first panic, with the total count, and clears the
// record for the next run. The caller calls it after the run's end, which
// every capture of the run precedes.
func (f *failures) take() *PanicError {
	if f.first.Load() == nil {
		return nil
	}
	p := f.first.Swap(nil)
	p.Panics = int(f.count.Swap(0))
	return p
}

// PanicError reports a panic (or a runtime.Goexit) in a copy of a task, or a
// panic in the task's CallerCanRun. Run re-raises the first one with this
// type; its Stack is the stack of the panicking goroutine, captured where it
// panicked.
type PanicError struct {
	Task     string // the task's Name ("?" if Name could not be called)
	Worker   int    // the copy's id (-1 for a panic outside any copy)
	OnCaller bool   // the panic happened on the goroutine that called Run
	Goexit   bool   // the copy called runtime.Goexit instead of panicking
	Value    any    // the value passed to panic (nil for Goexit and panic(nil))
	Stack    []byte // the panicking goroutine's stack, from debug.Stack
	Panics   int    // how many copies of the run panicked in all
	Method   string // the task method that panicked if not Work ("CallerCanRun", "Name")
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
	if p.Panics > 1 {
		more = fmt.Sprintf(" (and %d more copies panicked)", p.Panics-1)
	}
	if p.Method != "" {
		return fmt.Sprintf("task %q %s (on %s) %s\n\n%s", p.Task, p.Method, where, what, p.Stack)
	}
	return fmt.Sprintf("task %q copy %d (on %s) %s%s\n\n%s", p.Task, p.Worker, where, what, more, p.Stack)
}

// Unwrap returns the panic value if it is an error, so errors.Is and errors.As
// see through a re-raised panic.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}
