package workloads

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/runners"
)

// TestGCVerdictFlagsImpossible checks that a speedup above the CPUs is
// called a measurement error rather than printed as a result.
func TestGCVerdictFlagsImpossible(t *testing.T) {
	r := GCResult{Workers: 1, Heaps: []GCHeap{{Name: "small", Rows: []GCRow{
		{Impl: runners.NameSerial, P50NS: 3000, VsSerial: 1},
		{Impl: runners.NameWorkgang, P50NS: 1000, VsSerial: 3},
		{Impl: runners.NameWaitGroup, P50NS: 2000, VsSerial: 1.5},
		{Impl: runners.NameErrgroup, P50NS: 2500, VsSerial: 1.2},
		{Impl: runners.NameChanPool, P50NS: 2200, VsSerial: 1.36},
	}}}}
	lines := gcVerdict(nil, r)
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "3.00x (impossible on")
	assert.Contains(t, lines[0], "against the fastest peer, go+WaitGroup (2µs): 2.00x faster")
}
