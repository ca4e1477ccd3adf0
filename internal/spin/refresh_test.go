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

// A spin that succeeds leaves a stale view as it is (the refresh's system
// calls would delay the goroutine it waited for); one that fails refreshes
// it before its park.
func TestOnlyAFailedSpinRefreshes(t *testing.T) {
	defer SetHints(SetHints(allHints))
	defer Refresh()
	stale := func() int64 {
		next := int64(time.Since(start)) - int64(refreshEvery)
		view.next.Store(next)
		return next
	}
	next := stale()
	polls := 0
	// Three bursts: past the first yields.
	assert.True(t, Until(time.Hour, func() bool { polls++; return polls > 3*maxBurst }))
	assert.Equal(t, next, view.next.Load(), "a spin that succeeded refreshed the view")
	next = stale()
	assert.False(t, Until(time.Microsecond, func() bool { return false }))
	assert.NotEqual(t, next, view.next.Load(), "a failed spin must refresh the view before its park")
}
