package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/openmp"
)

// TestOpenMPTargets checks the mixed-process targets: one per row, judged at
// its worst gap, with every gap's ratio and the workers' shares in the
// detail; none without the mode.
func TestOpenMPTargets(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	side := func(ns, ratio float64, worker uint64) openmp.MixedSide {
		return openmp.MixedSide{MedianNS: ns, Ratio: f(ratio), Copies: openmp.CopyStats{WorkerCopies: worker, CallerCopies: 100 - worker}}
	}
	r := &openmp.Result{Mixed: &openmp.Mixed{
		Gaps: []openmp.MixedGap{{RequestedNS: 1000}, {RequestedNS: 100000}},
		Rows: []openmp.MixedRow{
			{Title: "PARALLEL", Mode: "RunN caller-runs", Alone: openmp.MixedSide{MedianNS: 500, Copies: openmp.CopyStats{WorkerCopies: 40, CallerCopies: 60}},
				Mixed: []openmp.MixedSide{side(520, 1.04, 38), side(600, 1.2, 2)}},
			{Title: "BARRIER", Mode: "team", Alone: openmp.MixedSide{MedianNS: 200, Copies: openmp.CopyStats{WorkerCopies: 100}},
				Mixed: []openmp.MixedSide{side(210, 1.05, 100), side(190, 0.95, 100)}},
		},
	}}
	ts := openmpTargets(nil, r)
	require.Len(t, ts, 2)
	assert.Equal(t, harness.StatusMiss, ts[0].Status)
	assert.InDelta(t, 1.2, ts[0].Ratio, 1e-9, "judged at the worst gap")
	assert.Contains(t, ts[0].Detail, "W=1us 1.04x, W=100us 1.20x")
	assert.Contains(t, ts[0].Detail, "40% of the copies alone, 38%, 2% mixed")
	assert.Equal(t, harness.StatusPass, ts[1].Status)
	assert.InDelta(t, 1.05, ts[1].Ratio, 1e-9)
	assert.Empty(t, openmpTargets(nil, &openmp.Result{}))
}
