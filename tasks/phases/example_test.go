package phases_test

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/tasks/phases"
)

// Each worker records its own time and count; the coordinator prints one line
// per phase after the run. (Fixed values here, for a stable output.)
func ExamplePhase() {
	mark := phases.New[time.Duration]("Mark", 3)
	marked := phases.New[int64]("Marked objects", 3)

	// Inside copy w of the task: mark.Set(w, time.Since(start)) and so on.
	mark.Set(0, 12*time.Millisecond)
	mark.Set(1, 10500*time.Microsecond)
	mark.Set(2, 11*time.Millisecond)
	marked.Add(0, 40000)
	marked.Add(1, 35000)
	// Worker 2 found nothing to mark and reported nothing.

	fmt.Println(mark.Summary())
	fmt.Println(marked.Summary())
	s := marked.Summary()
	fmt.Println("reported:", s.Workers, "total:", s.Sum)
	// Output:
	// Mark (ms): Min: 10.500, Avg: 11.167, Max: 12.000, Diff: 1.500, Sum: 33.500, Workers: 3
	// Marked objects: Min: 35000, Avg: 37500, Max: 40000, Diff: 5000, Sum: 75000, Workers: 2
	// reported: 2 total: 75000
}
