package semaphore_test

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/semaphore"
)

// A Semaphore hands permits from a signaller to waiters; the zero value has
// none and is ready to use.
func Example() {
	var ready semaphore.Semaphore
	ready.SetSpin(10 * time.Microsecond) // poll briefly, then park
	results := make([]int, 3)
	for i := range results {
		go func() {
			results[i] = i * i
			ready.Signal(1) // publishes results[i] to the Wait that takes it
		}()
	}
	for range results {
		ready.Wait()
	}
	fmt.Println(results)
	// Output: [0 1 4]
}
