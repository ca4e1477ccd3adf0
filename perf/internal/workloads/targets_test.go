package workloads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpdbench "github.com/workgang/workgang/examples/httpd/bench"
	portsbench "github.com/workgang/workgang/examples/ports/bench"
	"github.com/workgang/workgang/examples/ports/filter"
	powbench "github.com/workgang/workgang/examples/pow/bench"
	"github.com/workgang/workgang/examples/shared/fleet"
	"github.com/workgang/workgang/perf/internal/harness"
)

func statuses(ts []harness.Target) []string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Status)
	}
	return s
}

func TestHTTPDTargets(t *testing.T) {
	ts := httpdTargets([]httpdbench.Best{
		{Conns: 1, Workgang: "set2", WorkgangRPS: 160, Peer: "serial", PeerRPS: 100, VsSerial: 1.6, WorkgangP99: 9, SerialP99: 5},
		{Conns: 16, Workgang: "set2", WorkgangRPS: 90, Peer: "errgroup", PeerRPS: 100, VsSerial: 0.95, WorkgangP99: 4, SerialP99: 5},
	})
	require.Len(t, ts, 4, "c=1: two req/s goals; c=16: req/s and p99")
	assert.Equal(t, []string{harness.StatusPass, harness.StatusPass, harness.StatusMiss, harness.StatusPass}, statuses(ts))
	assert.InDelta(t, 0.9, ts[2].Ratio, 1e-9)
	assert.InDelta(t, 0.8, ts[3].Ratio, 1e-9)
}

func TestSharedTargets(t *testing.T) {
	row := func(w time.Duration, v fleet.Variant, wall time.Duration, rss int64) fleet.Result {
		return fleet.Result{Config: fleet.Config{Nominal: w, Variant: v}, Usage: fleet.Usage{Wall: wall, PeakRSS: rss}}
	}
	var rows []fleet.Result
	for _, w := range sharedWork {
		rows = append(rows, row(w, fleet.Serial, 100, 10), row(w, fleet.Own, 120, 30), row(w, fleet.GoWG, 90, 20), row(w, fleet.Shared, 104, 15))
	}
	ts := sharedTargets(rows)
	require.Len(t, ts, 4*len(sharedWork))
	assert.Equal(t, []string{harness.StatusPass, harness.StatusMiss, harness.StatusPass, harness.StatusPass}, statuses(ts[:4]), "own, go+wg, serial, RSS")
	assert.InDelta(t, 1.04, ts[2].Ratio, 1e-9)
}

func TestPowTargets(t *testing.T) {
	row := func(solver string, first, firstPre, first0 time.Duration) powbench.Row {
		r := powbench.Row{Solver: solver}
		r.First.P50, r.FirstPre.P50, r.First0.P50 = first, firstPre, first0
		return r
	}
	r := &powResult{
		Rows:  []powbench.Row{row("go+wg", 10, 10, 4), row("RunContext", 30, 15, 8), row("RunN+flag", 12, 11, 9)},
		Tails: []powbench.Tail{{Solver: "RunContext"}},
	}
	r.Tails[0].Lat.P99 = 4 * time.Microsecond
	ts := powTargets(r)
	require.Len(t, ts, 7, "4 first calls, 2 one-hash first calls, the tail")
	assert.Equal(t, []string{harness.StatusMiss, harness.StatusPass, harness.StatusPass, harness.StatusPass, harness.StatusPass, harness.StatusMiss, harness.StatusPass}, statuses(ts))
}

func TestPortsTargets(t *testing.T) {
	row := func(side, callers int, p portsbench.Pair, ratio, portAllocs, origAllocs float64) portsbench.Row {
		return portsbench.Row{Pair: p, Side: side, Callers: callers, Ratio: ratio, PortAllocs: portAllocs, OrigAllocs: origAllocs}
	}
	do := portsbench.Pair{Op: "blur", Port: filter.RowsDo, Orig: filter.RowsGo}
	chunks := portsbench.Pair{Op: "blur", Port: filter.ForChunks, Orig: filter.RowsGo}
	perChunk := portsbench.Pair{Op: "blur", Port: filter.LineForRange, Orig: filter.LineGo}
	require.True(t, perChunk.PerChunk())
	require.False(t, chunks.PerChunk())
	ts := portsTargets([]portsbench.Row{
		row(64, 1, do, 0.7, 5, 9), row(64, 1, chunks, 1.01, 10, 9), // worst 1.01 > 1.0; 10 allocs > 9
		row(64, 2, do, 1.04, 5, 9), row(64, 2, chunks, 0.9, 6, 9),
		row(64, 2, perChunk, 1.3, 18, 9), // shown, not judged: 64x64 with 2 callers passes at 1.04
		row(2048, 1, do, 1.2, 5, 9), row(2048, 1, chunks, 1.0, 6, 9),
	})
	require.Len(t, ts, 3+1, "3 size and caller pairs, the allocations")
	assert.Equal(t, []string{harness.StatusMiss, harness.StatusPass, harness.StatusMiss, harness.StatusMiss}, statuses(ts))
	assert.InDelta(t, 1.01, ts[0].Ratio, 1e-9)
	assert.InDelta(t, 1.04, ts[1].Ratio, 1e-9, "the per-chunk port is not the worst")
	assert.Contains(t, ts[0].Detail, "ForChunks")
	assert.Contains(t, ts[2].Name, "2048x2048, 1 callers")
	assert.InDelta(t, 10.0/9, ts[3].Ratio, 1e-9)
	assert.Empty(t, portsTargets(nil))
}
