package steal_test

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/tasks/steal"
)

// Two workers walk a binary tree of 1023 nodes that starts out entirely on
// worker 0: worker 1 gets its share by stealing, and the terminator ends the
// phase for both once the tree is done.
func ExampleSet_Drain() {
	const nodes = 1023
	const workers = 2
	set := steal.NewSet[int](workers)
	term := steal.NewTerminator(workers, set.HasWork)

	var visited atomic.Int64
	set.Push(0, 0) // the root
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set.Drain(w, term, func(w, node int) {
				visited.Add(1)
				for _, child := range []int{2*node + 1, 2*node + 2} {
					if child < nodes {
						set.Push(w, child)
					}
				}
			})
		}()
	}
	wg.Wait()
	fmt.Println("visited:", visited.Load(), "terminated:", term.Terminated(), "left:", set.Size())
	// Output:
	// visited: 1023 terminated: true left: 0
}

// The owner works at the bottom of its deque, last in first out; thieves
// take from the top, first in first out.
func ExampleDeque() {
	var d steal.Deque[string]
	d.Push("a")
	d.Push("b")
	d.Push("c")
	v, _ := d.Pop()
	fmt.Println("owner pops:", v)
	v, _ = d.Steal()
	fmt.Println("thief steals:", v)
	fmt.Println("left:", d.Len())
	// Output:
	// owner pops: c
	// thief steals: a
	// left: 1
}

// A worker that runs out of work offers termination; Offer returns false when
// work shows up (steal it), and true only when every worker has offered.
func ExampleTerminator() {
	set := steal.NewSet[int](2)
	term := steal.NewTerminator(2, set.HasWork)
	results := make(chan bool, 2)
	for range 2 {
		go func() { results <- term.Offer() }()
	}
	fmt.Println(<-results, <-results)
	// Output: true true
}
