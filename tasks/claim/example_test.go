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
	subtasks := claim.NewSubtasks(len(names))
	var ran [4]atomic.Int32

	var wg sync.WaitGroup
	for range 3 { // three copies
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range subtasks.All() {
				ran[i].Add(1) // run subtask i
			}
		}()
	}
	wg.Wait()

	for i, name := range names {
		fmt.Printf("%s: ran %d time(s)\n", name, ran[i].Load())
	}
	fmt.Println("check:", subtasks.Check())
	// Output:
	// scan stacks: ran 1 time(s)
	// scan globals: ran 1 time(s)
	// scan finalizers: ran 1 time(s)
	// scan handles: ran 1 time(s)
	// check: <nil>
}

// Check names the subtasks nobody claimed.
func ExampleSubtasks_Check() {
	subtasks := claim.NewSubtasks(4)
	subtasks.TryClaim(0)
	subtasks.TryClaim(2)
	fmt.Println(subtasks.Check())
	// Output:
	// claim: 2 of 4 subtasks never claimed: 1, 3
}

// Copies hand out region indices in order; together they visit each once.
func ExampleSequential() {
	regions := claim.NewSequential(10)
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
	fmt.Println("sum of indices:", visited.Load(), "claimed:", regions.Claimed())
	// Output:
	// sum of indices: 45 claimed: 10
}
