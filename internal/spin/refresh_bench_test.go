package spin

import "testing"

// BenchmarkRefresh is the cost of one refresh of the processor view with
// every hint on: what one waiter pays per refreshEvery.
func BenchmarkRefresh(b *testing.B) {
	defer SetHints(SetHints(allHints))
	for b.Loop() {
		refresh(0, 0)
	}
}
