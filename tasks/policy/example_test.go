package policy_test

import (
	"fmt"

	"github.com/workgang/workgang/tasks/policy"
)

// The default maximum: every CPU up to 8, then 5/8 of the rest.
func ExampleDefaultFor() {
	for _, ncpu := range []int{2, 8, 16, 64} {
		fmt.Printf("%d CPUs: %d workers\n", ncpu, policy.DefaultFor(ncpu))
	}
	// Output:
	// 2 CPUs: 2 workers
	// 8 CPUs: 8 workers
	// 16 CPUs: 13 workers
	// 64 CPUs: 43 workers
}

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
