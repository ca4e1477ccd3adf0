package workloads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpdbench "github.com/workgang/workgang/examples/httpd/bench"
	"github.com/workgang/workgang/perf/internal/runners"
)

// TestGCVerdictFlagsImpossible checks that a speedup above the CPUs is
// called a measurement error rather than printed as a result, and that the
// verdict judges the p99 beside the p50: faster at p50, slower at p99.
func TestGCVerdictFlagsImpossible(t *testing.T) {
	r := GCResult{Workers: 1, Heaps: []GCHeap{{Name: "small", Rows: []GCRow{
		{Impl: runners.NameSerial, P50NS: 3000, P99NS: 4000, VsSerial: 1},
		{Impl: runners.NameWorkgang, P50NS: 1000, P99NS: 8000, VsSerial: 3},
		{Impl: runners.NameWaitGroup, P50NS: 2000, P99NS: 4000, VsSerial: 1.5},
		{Impl: runners.NameErrgroup, P50NS: 2500, P99NS: 3000, VsSerial: 1.2},
		{Impl: runners.NameChanPool, P50NS: 2200, P99NS: 3000, VsSerial: 1.36},
	}}}}
	lines := gcVerdict(nil, r)
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "small heap: workgang's pause p50 1µs, p99 8µs: speedup over serial at p50 3.00x (impossible on")
	assert.Contains(t, lines[0], "workgang p50 3.00x faster than serial, p99 2.00x slower than serial's p99")
	assert.Contains(t, lines[0], "against the fastest peer, go+WaitGroup (p50 2µs, p99 4µs): workgang p50 2.00x faster than go+WaitGroup, p99 2.00x slower than go+WaitGroup's p99 (lower is better)")
}

// TestHTTPDVerdict checks that the server's verdict names, per connection
// count, the best workgang variant's req/s against serial's and judges its
// latency at p50 and at p99.
func TestHTTPDVerdict(t *testing.T) {
	row := func(variant string, conns int, rps float64, p50, p99 time.Duration) httpdbench.Row {
		r := httpdbench.Row{Variant: variant, Conns: conns}
		r.ReqPerSec, r.Latency.P50, r.Latency.P99 = rps, p50, p99
		return r
	}
	rows := []httpdbench.Row{
		row("serial", 16, 1000, 10*time.Millisecond, 20*time.Millisecond),
		row("errgroup", 16, 1100, 9*time.Millisecond, 30*time.Millisecond),
		row("set2", 16, 1250, 8*time.Millisecond, 25*time.Millisecond),
	}
	r := &httpdResult{Rows: rows, Bests: httpdbench.Bests(rows)}
	lines := httpdVerdict(nil, r)
	require.Len(t, lines, 1)
	assert.Equal(t, "c=16: the best workgang variant, set2, served 1.25x serial's req/s (higher is better); "+
		"set2 p50 1.25x faster than serial, p99 1.25x slower than serial's p99 (lower is better)", lines[0])
}
