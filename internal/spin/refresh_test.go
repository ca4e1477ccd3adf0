package spin

import "testing"

// BenchmarkRefresh is the cost of one refresh of the processor view with
// every hint on: what one waiter pays per refreshEvery.
func BenchmarkRefresh(b *testing.B) {
	defer SetHints(SetHints(allHints))
	for b.Loop() {
		refresh(0, 0, false)
	}
}

// A refresh runs on waiters' paths every few milliseconds: it allocates
// nothing, every hint on.
func TestRefreshAllocatesNothing(t *testing.T) {
	defer SetHints(SetHints(allHints))
	refresh(0, 0, false) // first use: open /proc/loadavg, name the samples
	if a := testing.AllocsPerRun(100, func() { refresh(0, 0, false) }); a != 0 {
		t.Errorf("refresh: %v allocations; want 0", a)
	}
}
