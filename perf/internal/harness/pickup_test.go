package harness

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeasurePickup checks the probe's figures: with two processors, as many
// samples as asked, each at least a clock read and at most the limit, p50 at
// most p90; with one processor, no figure (the readied goroutine could only
// run on the busy one). goleak (TestMain) checks that its goroutine ended.
func TestMeasurePickup(t *testing.T) {
	if runtime.NumCPU() >= 2 {
		old := runtime.GOMAXPROCS(2)
		p, ok := measurePickup(8, time.Millisecond)
		runtime.GOMAXPROCS(old)
		require.True(t, ok, "two processors: a figure")
		assert.Equal(t, 8, p.Samples)
		assert.Positive(t, p.P50NS)
		assert.LessOrEqual(t, p.P50NS, p.P90NS)
		assert.LessOrEqual(t, p.P90NS, float64(pickupLimit))
		assert.LessOrEqual(t, p.TimedOut, p.Samples)
	}
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	_, ok := measurePickup(8, time.Millisecond)
	assert.False(t, ok, "one processor: no figure")
}
