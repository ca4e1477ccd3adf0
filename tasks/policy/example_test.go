package policy_test

import (
	"fmt"

	"github.com/workgang/workgang/tasks/policy"
)

// A heavy phase gets every worker at once; as the work falls away the count
// halves toward the need instead of dropping straight to it.
func ExampleActive() {
	p := policy.Active{WorkPerWorker: 1000, Max: 8}
	for _, work := range []int{2500, 100000, 1200, 1200, 1200, 1200} {
		fmt.Printf("work %6d: %d workers\n", work, p.Next(work))
	}
	// Output:
	// work   2500: 3 workers
	// work 100000: 8 workers
	// work   1200: 5 workers
	// work   1200: 3 workers
	// work   1200: 2 workers
	// work   1200: 2 workers
}
