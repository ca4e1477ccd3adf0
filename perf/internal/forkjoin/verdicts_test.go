package forkjoin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
)

// TestDispatchVerdictEveryLevel checks that the verdict names full, half
// and min at -max 2, half with min's figures and saying so, and states the
// direction of its figures.
func TestDispatchVerdictEveryLevel(t *testing.T) {
	var rs []dispatchSetup
	for _, lv := range levels(2) {
		for mode, ns := range map[string]float64{runners.NameWorkgang: 1000, runners.NameCaller: 250, runners.NameOneWorkgang: 900, runners.NameOneCaller: 300} {
			rs = append(rs, dispatchSetup{level: lv, Mode: mode, SetupStats: measure.SetupStats{MedianAvgNS: ns * float64(lv.N)}})
		}
	}
	h := &harness.Harness{Cfg: harness.Config{Max: 2}}
	lines := dispatchVerdict(h, rs)
	require.Len(t, lines, 4, "full, half, min and the direction: %q", lines)
	assert.True(t, strings.HasPrefix(lines[0], "full (n=2): caller-runs 0.500 us per run against plain 2.000 us: 4.00x faster"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "half (n=1), same n as min: caller-runs 0.250 us"), lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "min (n=1): caller-runs 0.250 us"), lines[2])
	assert.Contains(t, lines[3], "lower is better")
}

// TestShownLevels checks that full, half and min are always shown, a level
// not measured naming the measured one with its n.
func TestShownLevels(t *testing.T) {
	for _, tt := range []struct {
		size int
		want string
	}{
		{1, "full n=1 =min, half n=1 =min, min n=1"},
		{2, "full n=2, half n=1 =min, min n=1"},
		{3, "full n=3, half n=1 =min, min n=1"},
		{8, "full n=8, half n=4, min n=1"},
	} {
		var parts []string
		for _, sl := range shownLevels(tt.size) {
			p := sl.Label + " n=" + string(rune('0'+sl.N))
			if sl.SameAs != "" {
				p += " =" + sl.SameAs
			}
			parts = append(parts, p)
		}
		assert.Equal(t, tt.want, strings.Join(parts, ", "), "size %d", tt.size)
	}
}

// TestGrainVerdict checks the break-evens named, a best peer named even when
// no peer breaks even, and an impossible speedup called an error.
func TestGrainVerdict(t *testing.T) {
	g := &GrainResult{Sweeps: []GrainSweep{{N: 2, GrainsNS: []float64{1000, 2000}, Impls: []GrainImpl{
		{Impl: runners.NameCaller, Speedup: []float64{0.9, 1.2}, BreakEvenNS: 1500, BreakEvenKind: beInterpolated},
		{Impl: runners.NameWaitGroup, Speedup: []float64{0.5, 0.8}, BreakEvenKind: beNone},
		{Impl: runners.NameErrgroup, Speedup: []float64{0.4, 2.5}, BreakEvenKind: beNone},
		{Impl: runners.NamePingPong, Speedup: []float64{1.5, 9}, BreakEvenKind: beBelow, BreakEvenNS: 1000},
	}}}}
	lines := grainVerdict(nil, g)
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "workgang+caller 1.5us")
	assert.Contains(t, lines[0], "best peer go+WaitGroup none")
	assert.Contains(t, lines[0], "errgroup's 2.50x (impossible on", "the ping-pong bound is no candidate")
}
