package gang_test

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/tasks"
)

// A Dispatcher needs goroutines that Serve it; package workers provides
// them, but the protocol can be driven by hand.
func ExampleDispatcher() {
	d := gang.New(3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.Serve(i)
		}()
	}

	var sum atomic.Int64
	add := tasks.Func("add-ids", func(worker int) { sum.Add(int64(worker)) })
	plan, _ := gang.Prepare(add)
	callerCopies, p := d.Run(plan, 3)
	fmt.Println(sum.Load(), callerCopies, p == nil)

	// Opted in: the caller runs copy 3 and any copy no worker started.
	plan, _ = gang.Prepare(tasks.CallerRuns(add))
	callerCopies, _ = d.Run(plan, 4)
	fmt.Println(sum.Load(), callerCopies >= 1)

	d.Stop(3)
	wg.Wait()
	// Output:
	// 3 0 true
	// 9 true
}
