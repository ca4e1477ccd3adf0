package workloads

import (
	"fmt"
	"time"

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

// gcVerdict compares, per heap, workgang's pause p50 with serial's and the
// fastest peer's.
func gcVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(GCResult)
	var lines []string
	for i := range r.Heaps {
		hp := &r.Heaps[i]
		w := hp.row(runners.NameWorkgang)
		var best *GCRow
		for _, p := range runners.Peers {
			if x := hp.row(p.Name); x != nil && (best == nil || x.P50NS < best.P50NS) {
				best = x
			}
		}
		if w == nil || best == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s heap: workgang's pause p50 %s, speedup over serial %s (%s); against the fastest peer, %s (%s): %s (%s)",
			hp.Name, roundNS(w.P50NS), verdict.Speedup(w.VsSerial, r.Workers), verdict.Higher,
			best.Impl, roundNS(best.P50NS), verdict.Times(w.P50NS, best.P50NS), verdict.Lower))
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
