package work

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLayout: each word of a grain's sink is a whole cache line.
func TestLayout(t *testing.T) {
	testutil.WholeLines(t, "PaddedWord", unsafe.Sizeof(PaddedWord{}))
}

// TestBlocks checks that the blocks of c copies tile [0, n).
func TestBlocks(t *testing.T) {
	for _, n := range []int{1, 7, 32, 100} {
		for c := 1; c <= min(n, 5); c++ {
			next := 0
			for i := range c {
				lo, hi := Block(i, c, n)
				assert.Equal(t, next, lo, "n=%d c=%d copy %d", n, c, i)
				assert.GreaterOrEqual(t, hi-lo, n/c, "n=%d c=%d copy %d", n, c, i)
				next = hi
			}
			assert.Equal(t, n, next, "n=%d c=%d", n, c)
		}
	}
}

// TestGrainSplitsTheWork checks that a grain of W splits into n copies of
// about W/n each, at least one step, and that Burn depends on its count.
func TestGrainSplitsTheWork(t *testing.T) {
	g := NewGrain(4, 4000, 10)
	assert.Equal(t, 100, g.units, "4000 ns over 4 copies at 10 ns a step")
	assert.Equal(t, 1, NewGrain(8, 1, 10).units, "at least one step")
	g.Work(3)
	assert.Equal(t, Burn(100), g.sink[3].V)
	assert.NotEqual(t, Burn(100), Burn(101))
	assert.Positive(t, Calibrate())
}
