package mark_test

import (
	"fmt"

	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/workers"
)

// Mark a graph of long lists in parallel and check it against the serial
// reference: the marked sets are identical.
func ExampleMarker() {
	w := workers.New("gc", 2)
	defer w.Close()
	m := mark.NewMarker(w)

	g := mark.NewGraph(mark.Lists, 100000, 1)
	ref := mark.NewBitmap(g.Len())
	fmt.Println("serial marked:", mark.MarkSerial(g, ref))

	b := mark.NewBitmap(g.Len())
	st := m.Mark(g, b, 2)
	_, differ := ref.FirstDifference(b)
	fmt.Println("parallel marked:", st.Marked, "on", st.Workers, "workers; identical:", !differ)
	// Output:
	// serial marked: 100000
	// parallel marked: 100000 on 2 workers; identical: true
}
