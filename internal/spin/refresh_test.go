package spin

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

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

// TestForceViewHoldsAgainstRefreshes: while waiters refresh a stale view, a
// forced view stays as forced until its restore (a refresh that began before
// ForceView must not overwrite it).
func TestForceViewHoldsAgainstRefreshes(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				view.next.Store(0) // stale: the next current() refreshes
				current()
				runtime.Gosched()
			}
		}()
	}
	bad := 0
	for range 2000 {
		restore := ForceView(7, true)
		for range 20 {
			if w := view.word.Load(); w != viewWord(7, true) {
				bad++
			}
			runtime.Gosched()
		}
		restore()
	}
	close(stop)
	wg.Wait()
	if bad != 0 {
		t.Errorf("the forced view was overwritten %d times", bad)
	}
}

// A spin refreshes a stale view between its bursts, so the load reading
// holds at any budget, and stops once the view says waiters may not spin;
// the coordinator's end wait (refresh false) leaves a stale view as it is
// (the refresh's system calls would delay the run's end).
func TestSpinRefreshesTheView(t *testing.T) {
	defer SetHints(SetHints(allHints))
	defer Refresh()
	stale := func() int64 {
		next := int64(time.Since(start)) - int64(refreshEvery)
		view.next.Store(next)
		return next
	}
	next := stale()
	polls := 0
	// Three bursts: past the first refresh.
	until(time.Hour, func() bool { polls++; return polls > 3*maxBurst }, false)
	assert.Equal(t, next, view.next.Load(), "the end wait refreshed the view")
	next = stale()
	polls = 0
	Until(time.Hour, func() bool { polls++; return polls > 3*maxBurst })
	assert.NotEqual(t, next, view.next.Load(), "a spin left a stale view stale")

	restore := ForceView(2, true)
	defer restore()
	assert.False(t, Until(time.Hour, func() bool { return false }), "a spin went on while the view said crowded")
}

// A program's first loop does not wait for the load's first reading: a view
// never read is set from the processors alone.
func TestLateOnAFreshViewReadsNoLoad(t *testing.T) {
	defer Refresh()
	view.mu.Lock()
	view.word.Store(0)
	view.next.Store(0)
	view.mu.Unlock()
	if Late() != (procsNow() < 2) {
		t.Errorf("Late() on a fresh view = %v with %d processors", !(procsNow() < 2), procsNow())
	}
	if view.next.Load() != 0 {
		t.Error("Late on a fresh view read the load (the view's next refresh moved)")
	}
}
