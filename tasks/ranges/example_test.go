package ranges_test

import (
	"fmt"
	"sync"

	"github.com/workgang/workgang/tasks/ranges"
)

// Two copies square a slice in place, claiming chunks of 63 elements until
// the loop is drained.
func ExampleLoop() {
	xs := make([]int, 1000)
	for i := range xs {
		xs[i] = i
	}
	var loop ranges.Loop
	loop.Reset(len(xs), ranges.ChunkSize(len(xs), 2))

	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo, hi, ok := loop.Next()
				if !ok {
					return
				}
				for i := lo; i < hi; i++ {
					xs[i] *= xs[i]
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("chunks:", loop.NumChunks())
	fmt.Println(xs[3], xs[999])
	// Output:
	// chunks: 16
	// 9 998001
}

// A guided loop hands out large chunks first and small ones at the end.
func ExampleLoop_ResetGuided() {
	var loop ranges.Loop
	loop.ResetGuided(100, 8, 2)
	for {
		lo, hi, ok := loop.Next()
		if !ok {
			break
		}
		fmt.Print(hi-lo, " ")
	}
	fmt.Println()
	// Output: 25 18 14 10 8 8 8 8 1
}

// A Task runs the loop as a tasks.Task: hand it to a worker set's RunN, and
// reset its Loop before the next run.
func ExampleNewTask() {
	sums := make([]int, 3) // one per copy
	task := ranges.NewTask("sum", 100, 10, func(worker, lo, hi int) {
		for i := lo; i < hi; i++ {
			sums[worker] += i
		}
	})
	for range 2 {
		var wg sync.WaitGroup
		for w := range 3 { // what RunN(task, 3) does
			wg.Add(1)
			go func() { defer wg.Done(); task.Work(w) }()
		}
		wg.Wait()
		task.Loop().Reset(100, 10)
	}
	fmt.Println(sums[0] + sums[1] + sums[2])
	// Output: 9900
}
