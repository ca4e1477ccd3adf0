package forkjoin

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// TestCompareBreakEven checks the break-even target's verdict in every case.
func TestCompareBreakEven(t *testing.T) {
	gi := func(ns float64, kind string) *GrainImpl { return &GrainImpl{BreakEvenNS: ns, BreakEvenKind: kind} }
	tests := []struct {
		name   string
		m, wg  *GrainImpl
		status string
		ratio  float64
		bound  bool
	}{
		{"both crossings, pass", gi(1000, beInterpolated), gi(3000, beInterpolated), harness.StatusPass, 1.0 / 3, false},
		{"both crossings, miss", gi(2000, beInterpolated), gi(3000, beInterpolated), harness.StatusMiss, 2.0 / 3, false},
		{"workgang below the sweep", gi(500, beBelow), gi(2000, beInterpolated), harness.StatusPass, 0.25, true},
		{"bound decides nothing", gi(500, beBelow), gi(700, beInterpolated), harness.StatusNA, 500.0 / 700, true},
		{"both below", gi(500, beBelow), gi(500, beBelow), harness.StatusNA, 0, false},
		{"workgang never", gi(0, beNone), gi(2000, beInterpolated), harness.StatusMiss, 0, false},
		{"waitgroup never", gi(2000, beInterpolated), gi(0, beNone), harness.StatusPass, 0, false},
		{"neither", gi(0, beNone), gi(0, beNone), harness.StatusNA, 0, false},
	}
	for _, tt := range tests {
		tg := harness.Target{Limit: breakEvenLimit}
		compareBreakEven(&tg, tt.m, tt.wg)
		assert.Equal(t, tt.status, tg.Status, tt.name)
		assert.InDelta(t, tt.ratio, tg.Ratio, 1e-9, tt.name)
		assert.Equal(t, tt.bound, tg.UpperBound, tt.name)
	}
}

// TestPeerTargetsAndMachineState checks the machine-state sentence for a
// slow and a fast ping-pong, and the four full-level goals.
func TestPeerTargetsAndMachineState(t *testing.T) {
	mk := func(ping float64) *peersResult {
		rows := []peerRow{{Impl: runners.NameWorkgang}, {Impl: runners.NameOneWorkgang}, {Impl: runners.NameWaitGroup}, {Impl: runners.NameErrgroup}, {Impl: runners.NameChanPool}, {Impl: runners.NamePingPong}}
		for i, ns := range []float64{900, 1200, 700, 800, 600, ping} {
			rows[i].MedianAvgNS = ns
		}
		return &peersResult{Groups: []peerGroup{{level: level{"full", 2}, Rows: rows}}}
	}
	var b bytes.Buffer
	printMachineState(&b, mk(1100))
	assert.Contains(t, b.String(), "took 1100 ns; the cheapest peer (chanpool)")
	assert.Contains(t, b.String(), "slow in this run")
	ts := peerTargets(mk(1100))
	require.Len(t, ts, len(ratioGoals)+1+4)
	ts = ts[len(ratioGoals)+1:]
	assert.Equal(t, harness.StatusMiss, ts[0].Status, "900/600 > 1")
	assert.Equal(t, harness.StatusPass, ts[1].Status, "900/1100 <= 1.5")
	assert.Equal(t, harness.StatusMiss, ts[2].Status, "one set: 1200/600 > 1")
	assert.Equal(t, harness.StatusPass, ts[3].Status, "one set: 1200/1100 <= 1.5")
	b.Reset()
	printMachineState(&b, mk(300))
	assert.Contains(t, b.String(), "fast in this run")
}

// TestPauseTargets checks the pause's goals against serial: a p50 at least
// 1.85x serial's speed and a p99 at most serial's, each judged on its own,
// and the script's limit named in the reason.
func TestPauseTargets(t *testing.T) {
	mk := func(p50, p99 float64) *PauseResult {
		return &PauseResult{IdealX: 1.93, Impls: []PauseImplResult{
			{Impl: runners.NameSerial, P50NS: 370, P99NS: 400},
			{Impl: runners.NameWaitGroup, P50NS: 400, P99NS: 450},
			{Impl: runners.NameErrgroup, P50NS: 400, P99NS: 450},
			{Impl: runners.NameChanPool, P50NS: 400, P99NS: 450},
			{Impl: runners.NameWorkgang, P50NS: p50, P99NS: p99},
		}}
	}
	for _, tt := range []struct {
		p50, p99           float64
		serial, tail, peer string
	}{
		{200, 400, harness.StatusPass, harness.StatusPass, harness.StatusPass}, // 1.85x, p99 at serial's
		{200, 401, harness.StatusPass, harness.StatusMiss, harness.StatusPass}, // a longer tail
		{210, 300, harness.StatusMiss, harness.StatusPass, harness.StatusPass}, // 1.76x
		{300, 300, harness.StatusMiss, harness.StatusPass, harness.StatusMiss},
	} {
		ts := pauseTargets(mk(tt.p50, tt.p99), 2)
		require.Len(t, ts, 3)
		assert.Equal(t, []string{"pause p50: serial / workgang", "pause p99: workgang / serial", "pause p50: workgang / best peer"},
			[]string{ts[0].Name, ts[1].Name, ts[2].Name})
		assert.Equal(t, []string{tt.serial, tt.tail, tt.peer}, []string{ts[0].Status, ts[1].Status, ts[2].Status}, "p50 %v, p99 %v", tt.p50, tt.p99)
		assert.Equal(t, ">= 1.85", ts[0].Goal)
		assert.Equal(t, "<= 1", ts[1].Goal)
		assert.Contains(t, ts[0].Reason, "1.93x here, the script's limit on 2 CPUs")
		assert.Equal(t, ts[0].Reason, ts[1].Reason, "one goal, two figures")
	}
}
