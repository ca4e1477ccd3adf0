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
// and min at -max 2, half with min's figures and saying so, judges p50 and
// p99 besides the average (here caller-runs is faster on average and at
// p50, slower at p99), and states the direction of its figures.
func TestDispatchVerdictEveryLevel(t *testing.T) {
	var rs []dispatchSetup
	for _, lv := range levels(2) {
		for mode, ns := range map[string]float64{runners.NameWorkgang: 1000, runners.NameCaller: 250, runners.NameOneWorkgang: 900, runners.NameOneCaller: 300} {
			st := measure.SetupStats{MedianAvgNS: ns * float64(lv.N), P50NS: ns, P99NS: 5000}
			if mode == runners.NameCaller {
				st.P99NS = 10000
			}
			rs = append(rs, dispatchSetup{level: lv, Mode: mode, SetupStats: st})
		}
	}
	h := &harness.Harness{Cfg: harness.Config{Max: 2}}
	lines := dispatchVerdict(h, rs)
	require.Len(t, lines, 4, "full, half, min and the direction: %q", lines)
	assert.True(t, strings.HasPrefix(lines[0], "full (n=2): caller-runs 0.500 us per run against plain 2.000 us: 4.00x faster"+
		" (caller-runs p50 4.00x faster than plain, p99 2.00x slower than plain's p99); on the long-lived set 0.600 us per run against plain 1.800 us: 3.00x faster"+
		" (caller-runs p50 3.00x faster than plain, p99 1.00x faster than plain's p99)"), lines[0])
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

// TestPauseVerdictJudgesTheTail checks that a pause faster than serial at
// p50 but slower at p99 is called both, against serial and the best peer.
func TestPauseVerdictJudgesTheTail(t *testing.T) {
	r := &PauseResult{IdealX: 1.93, Impls: []PauseImplResult{
		{Impl: runners.NameSerial, P50NS: 340e3, P99NS: 400e3, Speedup: 1},
		{Impl: runners.NameWaitGroup, P50NS: 300e3, P99NS: 500e3},
		{Impl: runners.NameErrgroup, P50NS: 310e3, P99NS: 420e3},
		{Impl: runners.NameChanPool, P50NS: 320e3, P99NS: 600e3},
		{Impl: runners.NameWorkgang, P50NS: 200e3, P99NS: 800e3, Speedup: 1.7},
	}}
	lines := pauseVerdict(nil, r)
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], "workgang's pause p50 200.0 us, p99 800.0 us: speedup over serial at p50 1.70x")
	assert.Contains(t, lines[0], "workgang p50 1.70x faster than serial, p99 2.00x slower than serial's p99 (lower is better)")
	assert.Contains(t, lines[1], "against the fastest peer, go+WaitGroup (p50 300.0 us, p99 500.0 us): workgang p50 1.50x faster than go+WaitGroup, p99 1.60x slower than go+WaitGroup's p99")
}
