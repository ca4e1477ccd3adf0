package batch_test

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/tasks/batch"
)

// A post-processing phase with two cheap serial steps and one parallel step
// that can keep about 2.5 workers busy: the batch asks for ceil(0.1 + 0.2 +
// 2.5) = 3 workers, and gets at most the 2 that are active.
func ExampleBatch() {
	var cleared, freed atomic.Int64
	b := batch.New("post-mark")
	b.AddSerial(batch.Func("reset statistics", 0.1, func(int) { cleared.Add(1) }))
	b.AddSerial(batch.Func("clear caches", 0.2, func(int) { cleared.Add(1) }))
	b.AddParallel(batch.Func("free regions", 2.5, func(worker int) { freed.Add(1) }))

	fmt.Println("wanted:", b.Workers(8), "with 2 active:", b.Workers(2))

	n := b.Workers(2)
	var wg sync.WaitGroup
	for w := range n { // what workers' RunN(b, n) does
		wg.Add(1)
		go func() { defer wg.Done(); b.Work(w) }()
	}
	wg.Wait()
	fmt.Println("serial runs:", cleared.Load(), "parallel runs:", freed.Load())
	b.Reset() // before the next run
	// Output:
	// wanted: 3 with 2 active: 2
	// serial runs: 2 parallel runs: 2
}
