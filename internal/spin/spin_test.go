package spin

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBudgetFor(t *testing.T) {
	for _, tc := range []struct {
		goroutines, procs int
		want              time.Duration
	}{
		{1, 1, 0}, {2, 1, 0}, {2, 2, Default}, {3, 2, Oversubscribed}, {8, 8, Default}, {9, 8, Oversubscribed},
	} {
		if got := budgetFor(tc.goroutines, tc.procs); got != tc.want {
			t.Errorf("budgetFor(%d, %d) = %v; want %v", tc.goroutines, tc.procs, got, tc.want)
		}
	}
	assert.Equal(t, budgetFor(2, runtime.GOMAXPROCS(0)), Budget(2))
	assert.Equal(t, Oversubscribed, CapFor(time.Hour, 3, 2))
	assert.Equal(t, time.Microsecond, CapFor(time.Microsecond, 2, 2))
	assert.Equal(t, time.Duration(0), CapFor(time.Hour, 2, 1))
	// An explicit budget above Default stands when nothing is
	// oversubscribed: only oversubscription (or one processor) cuts it.
	assert.Equal(t, 20*time.Millisecond, CapFor(20*time.Millisecond, 2, 2))
	assert.Equal(t, time.Hour, CapFor(time.Hour, 3, 4))
	assert.Equal(t, time.Duration(0), CapFor(0, 2, 4))
}

func TestUntil(t *testing.T) {
	calls := 0
	assert.True(t, Until(0, nil, func() bool { calls++; return true }))
	assert.Equal(t, 1, calls)
	calls = 0
	assert.False(t, Until(0, nil, func() bool { calls++; return false }), "budget 0 polls once")
	assert.Equal(t, 1, calls)
	start := time.Now()
	assert.False(t, Until(200*time.Microsecond, nil, func() bool { return false }))
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Microsecond, "gives up only after the budget")

	var flag atomic.Bool
	go func() {
		time.Sleep(time.Millisecond)
		flag.Store(true)
	}()
	var sp Spinner
	assert.True(t, Until(time.Minute, &sp, flag.Load), "sees a condition set by another goroutine")
}

func TestSpinnerAdapts(t *testing.T) {
	var sp Spinner
	assert.Equal(t, maxBurst, sp.Burst(), "zero value starts at the longest burst")
	var got []int
	for range 7 {
		sp.adapt(true) // permit found after a long yield: shorten
		got = append(got, sp.Burst())
	}
	assert.Equal(t, []int{256, 64, 16, 4, 1, 1, 1}, got)
	got = got[:0]
	for range 12 {
		sp.adapt(false) // found mid-burst or after a quick yield: lengthen
		got = append(got, sp.Burst())
	}
	assert.Equal(t, []int{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024, 1024}, got)
	var nilSp *Spinner
	assert.NotPanics(t, func() { nilSp.adapt(true) })
	assert.Equal(t, maxBurst, nilSp.Burst())
}

func BenchmarkGosched(b *testing.B) {
	for range b.N {
		runtime.Gosched()
	}
}
