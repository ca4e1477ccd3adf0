package claim_test

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/tasks/claim"
)

// Three copies of a task share four subtasks; each subtask runs once, on
// whichever copy claims it first.
func ExampleSubtasks() {
	names := []string{"scan stacks", "scan globals", "scan finalizers", "scan handles"}
	var subtasks claim.Subtasks
	subtasks.Reset(len(names)) // before each run
	var ran [4]atomic.Int32

	var wg sync.WaitGroup
	for range 3 { // three copies
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				if subtasks.TryClaim(i) {
					ran[i].Add(1) // run subtask i
				}
			}
		}()
	}
	wg.Wait()

	for i, name := range names {
		fmt.Printf("%s: ran %d time(s)\n", name, ran[i].Load())
	}
	// Output:
	// scan stacks: ran 1 time(s)
	// scan globals: ran 1 time(s)
	// scan finalizers: ran 1 time(s)
	// scan handles: ran 1 time(s)
}

// Copies hand out region indices in order; together they visit each once.
func ExampleSequential() {
	var regions claim.Sequential
	regions.Reset(10) // before each run
	var visited atomic.Int64

	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range regions.All() {
				visited.Add(int64(i))
			}
		}()
	}
	wg.Wait()
	fmt.Println("sum of indices:", visited.Load())
	// Output:
	// sum of indices: 45
}
