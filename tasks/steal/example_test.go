package steal_test

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/tasks/steal"
)

// Two workers walk a binary tree of 1023 nodes that starts out on worker 0:
// each pushes the children it discovers onto its private stack, worker 1
// gets its share by stealing what worker 0 publishes, and the terminator ends
// the phase for both once the tree is done.
func ExampleSet_Drain() {
	const nodes = 1023
	const workers = 2
	set := steal.NewSet[int](workers)
	term := steal.NewTerminator(workers, set.HasWork)

	var visited atomic.Int64
	set.Push(0, 0) // the root
	var wg sync.WaitGroup
	for w := range workers { // what workers' RunN does with a task's copies
		wg.Add(1)
		go func() {
			defer wg.Done()
			set.Drain(w, term, func(l *steal.Local[int], node int) {
				visited.Add(1)
				for _, child := range []int{2*node + 1, 2*node + 2} {
					if child < nodes {
						l.Push(child)
					}
				}
			})
		}()
	}
	wg.Wait()
	fmt.Println("visited:", visited.Load(), "aborted:", term.Aborted())
	term.Reset() // before the next phase
	// Output:
	// visited: 1023 aborted: false
}

// A worker that fails aborts the phase: Drain returns in every worker, and
// the values left behind are cleared before the set is used again.
func ExampleTerminator_Abort() {
	set := steal.NewSet[int](2)
	term := steal.NewTerminator(2, set.HasWork)
	for v := range 100 {
		set.Push(0, v)
	}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set.Drain(w, term, func(_ *steal.Local[int], v int) {
				if v == 99 { // the first value worker 0 pops
					term.Abort()
				}
			})
		}()
	}
	wg.Wait()
	fmt.Println("aborted:", term.Aborted())
	set.Clear()
	term.Reset()
	// Output: aborted: true
}
