package forkjoin

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPauseScript checks the script has the shape a collector's pause has: at
// least 10 phases, n from 1 to max, 0.5 to 100 us of work per phase, both
// modes; and that resolving it for a set keeps n within [1, size].
func TestPauseScript(t *testing.T) {
	assert.GreaterOrEqual(t, len(pauseScript), 10)
	ns, modes := map[int]bool{}, map[bool]bool{}
	for _, p := range pauseScript {
		assert.GreaterOrEqual(t, p.workNS, 500.0, p.name)
		assert.LessOrEqual(t, p.workNS, 100000.0, p.name)
		ns[p.n], modes[p.callerRuns] = true, true
	}
	assert.Len(t, ns, 3, "one, half and full parallelism")
	assert.Len(t, modes, 2, "caller-runs and plain phases")
	for _, size := range []int{1, 2, 5} {
		ps := resolvePhases(size, 1)
		for _, p := range ps {
			assert.True(t, p.N >= 1 && p.N <= size, "size %d phase %s: n=%d", size, p.Name, p.N)
		}
		work, ideal := idealSpeedup(ps, size)
		assert.InDelta(t, 322500, work, 1e-6)
		assert.True(t, ideal >= 1 && ideal <= float64(size), "size %d: ideal speedup %v", size, ideal)
		_, one := idealSpeedup(ps, 1)
		assert.Equal(t, 1.0, one, "size %d: one processor cannot beat serial", size)
	}
}
