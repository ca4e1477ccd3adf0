package slots_test

import (
	"fmt"
	"sync"

	"github.com/workgang/workgang/tasks/slots"
)

// Each worker counts into its own padded slot; the counts are combined once
// the workers are done.
func Example() {
	words := []string{"go", "gang", "worker", "slot", "pad", "line", "cache", "sum"}
	const workers = 2
	counts := slots.New[int](workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(words); i += workers {
				*counts.At(w) += len(words[i])
			}
		}()
	}
	wg.Wait() // orders every worker's writes before the reads below
	fmt.Println(slots.Sum(counts))
	// Output: 31
}
