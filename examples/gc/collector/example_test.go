package collector_test

import (
	"fmt"

	"github.com/workgang/workgang/examples/gc/collector"
	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/workers"
)

// Collect a heap a few times on a worker set, the program running between
// collections, and check each collection against the serial reference.
func ExampleCollector() {
	w := workers.New("gc", 2)
	defer w.Close()
	c := collector.New(w)

	h := heap.New(mark.Random, 100000, 1)
	ref := mark.NewBitmap(h.Slots())
	for range 3 {
		want := h.Clone()
		heap.Collect(want, ref)
		st := c.Collect(h)
		fmt.Printf("GC(%d) identical to the serial collector: %v\n", st.Cycle, heap.Diff(h, want) == nil)
		h.Mutate()
	}
	// Output:
	// GC(1) identical to the serial collector: true
	// GC(2) identical to the serial collector: true
	// GC(3) identical to the serial collector: true
}
