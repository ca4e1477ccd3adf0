package tasks_test

import (
	"fmt"

	"github.com/workgang/workgang/tasks"
)

// Func names a function as a Task; CallerRuns opts it in to caller-runs.
func ExampleCallerRuns() {
	t := tasks.Func("scan-roots", func(worker int) {})
	fmt.Println(t.Name(), tasks.CallerCanRun(t))
	c := tasks.CallerRuns(t)
	fmt.Println(c.Name(), tasks.CallerCanRun(c))
	// Output:
	// scan-roots false
	// scan-roots true
}

// A task type opts in with a method CallerCanRun() bool that returns true.
type markRoots struct{}

func (markRoots) Name() string       { return "mark-roots" }
func (markRoots) Work(worker int)    {}
func (markRoots) CallerCanRun() bool { return true }

func ExampleCallerCanRun() {
	fmt.Println(tasks.CallerCanRun(markRoots{}))
	// Output: true
}
