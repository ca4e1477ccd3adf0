package spin

import "testing"

// A refresh runs on waiters' paths every few milliseconds: it allocates
// nothing, every hint on.
func TestRefreshAllocatesNothing(t *testing.T) {
	defer SetHints(SetHints(allHints))
	Refresh()
	current() // first use: open /proc/loadavg, name the sample
	if a := testing.AllocsPerRun(100, func() { Refresh(); current() }); a != 0 {
		t.Errorf("refresh: %v allocations; want 0", a)
	}
}

// BenchmarkRefresh is the cost of one refresh of the view with every hint
// on: what one waiter pays per refreshEvery.
func BenchmarkRefresh(b *testing.B) {
	defer SetHints(SetHints(allHints))
	for b.Loop() {
		Refresh()
		current()
	}
}
