package workloads

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/examples/httpd/bench"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
)

// markVerdict compares the stealing mark with serial and the static
// partition per graph shape.
func markVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(MarkResult)
	var lines []string
	for _, row := range r.Rows {
		lines = append(lines, fmt.Sprintf("%s graph: the stealing mark's speedup over serial %s, over the static partition %s (%s)",
			row.Shape, verdict.Speedup(row.VsSerial, row.Workers), verdict.Speedup(row.VsStatic, row.Workers), verdict.Higher))
	}
	return lines
}

// gcVerdict compares, per heap, workgang's pause p50 and p99 with serial's
// and the fastest peer's.
func gcVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(GCResult)
	var lines []string
	for i := range r.Heaps {
		hp := &r.Heaps[i]
		w, serial := hp.row(runners.NameWorkgang), hp.row(runners.NameSerial)
		var best *GCRow
		for _, p := range runners.Peers {
			if x := hp.row(p.Name); x != nil && (best == nil || x.P50NS < best.P50NS) {
				best = x
			}
		}
		if w == nil || serial == nil || best == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s heap: workgang's pause p50 %s, p99 %s: speedup over serial at p50 %s (%s); %s; against the fastest peer, %s (p50 %s, p99 %s): %s (%s)",
			hp.Name, roundNS(w.P50NS), roundNS(w.P99NS), verdict.Speedup(w.VsSerial, r.Workers), verdict.Higher,
			verdict.Tails("workgang", w.tail(), runners.NameSerial, serial.tail()),
			best.Impl, roundNS(best.P50NS), roundNS(best.P99NS), verdict.Tails("workgang", w.tail(), best.Impl, best.tail()), verdict.Lower))
	}
	return lines
}

// tail returns the row's pause p50 and p99.
func (x *GCRow) tail() verdict.Tail { return verdict.Tail{P50: x.P50NS, P99: x.P99NS} }

// httpdVerdict compares, per connection count, the best workgang variant
// (by req/s) with serial: its req/s, and its latency at p50 and p99.
func httpdVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(*httpdResult)
	var lines []string
	for _, b := range r.Bests {
		w, serial := r.row(b.Workgang, b.Conns), r.row("serial", b.Conns)
		if w == nil || serial == nil {
			continue
		}
		tail := func(x *bench.Row) verdict.Tail {
			return verdict.Tail{P50: float64(x.Latency.P50), P99: float64(x.Latency.P99)}
		}
		lines = append(lines, fmt.Sprintf("c=%d: the best workgang variant, %s, served %.2fx serial's req/s (%s); %s (%s)",
			b.Conns, b.Workgang, b.VsSerial, verdict.Higher, verdict.Tails(b.Workgang, tail(w), "serial", tail(serial)), verdict.Lower))
	}
	return lines
}

// roundNS returns ns as a duration to three or four significant digits.
func roundNS(ns float64) time.Duration {
	d := time.Duration(ns)
	if d >= time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(100 * time.Nanosecond)
}
