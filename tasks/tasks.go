// Package tasks defines the unit of work a worker set runs: a named Task whose
// Work method is called once per copy with a distinct worker id, and the
// caller-runs opt-in that lets the goroutine calling Run execute copies itself.
//
// A Task is run as n copies: copy i calls Work(i) for each i in [0, n), each
// exactly once. The id names a copy (a slot of work), not a goroutine: one
// goroutine may run several copies of the same run, one after another.
//
// By default every copy runs on a worker goroutine. A task opts in to
// caller-runs with a method CallerCanRun() bool that returns true (or by being
// wrapped by CallerRuns); the calling goroutine may then run any number of the
// n copies itself, taking ids from the same counter as the workers. A task
// should opt in only when its copies do not need to run at the same time as
// each other (a copy that waits for its siblings at a barrier must not opt
// in, or must tolerate running on the caller).
//
// The package imports only the standard library.
package tasks

import "strconv"

// MaxCopies is the one size cap of the module: the most copies a run may
// have, the most workers a set or a dispatcher may have and the most members
// of a team. Every constructor and run checks its count against it.
const MaxCopies = 1 << 16

// Task is a unit of parallel work. Work is called once per copy with the
// copy's id in [0, n). Implementations must be safe for concurrent calls of Work
// with distinct ids.
type Task interface {
	// Name names the task in panics, traces and logs.
	Name() string
	// Work runs copy number worker of the task.
	Work(worker int)
}

// callerRunnable is implemented by tasks that may let the goroutine calling
// Run execute some of their copies. A task opts in when CallerCanRun returns
// true; the answer must not change while a run is in progress.
type callerRunnable interface {
	CallerCanRun() bool
}

// CallerCanRun reports whether t opts in to caller-runs: whether it has a
// method CallerCanRun() bool that returns true. The answer must not change
// while a run of t is in progress.
func CallerCanRun(t Task) bool {
	c, ok := t.(callerRunnable)
	return ok && c.CallerCanRun()
}

// Func returns a Task with the given name whose Work calls fn. It panics if fn
// is nil.
func Func(name string, fn func(worker int)) Task {
	if fn == nil {
		panic("tasks: Func: nil function for task " + quote(name))
	}
	return &funcTask{name: name, fn: fn}
}

type funcTask struct {
	name string
	fn   func(worker int)
}

func (t *funcTask) Name() string    { return t.name }
func (t *funcTask) Work(worker int) { t.fn(worker) }
func (t *funcTask) String() string  { return "tasks.Func(" + quote(t.name) + ")" }

// CallerRuns returns a Task that behaves like t and opts in to caller-runs. It
// panics if t is nil. Wrapping a task that already opts in returns it unchanged.
func CallerRuns(t Task) Task {
	if t == nil {
		panic("tasks: CallerRuns: nil task")
	}
	if CallerCanRun(t) {
		return t
	}
	return callerRuns{t}
}

type callerRuns struct{ Task }

func (callerRuns) CallerCanRun() bool { return true }

// Unwrap returns the wrapped task.
func (c callerRuns) Unwrap() Task { return c.Task }

func quote(s string) string { return strconv.Quote(s) }
