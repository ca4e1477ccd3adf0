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
	var d gang.Dispatcher
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d.Serve() {
			}
		}()
	}

	var sum atomic.Int64
	add := tasks.Func("add-ids", func(worker int) { sum.Add(int64(worker)) })
	callerCopies, p := d.Run(add, 3, false)
	fmt.Println(sum.Load(), callerCopies, p == nil)

	// Opted in: the caller runs at least one of the 4 copies.
	callerCopies, _ = d.Run(tasks.CallerRuns(add), 4, true)
	fmt.Println(sum.Load(), callerCopies >= 1)

	d.Stop(3)
	wg.Wait()
	// Output:
	// 3 0 true
	// 9 true
}
