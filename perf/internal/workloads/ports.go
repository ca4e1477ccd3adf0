package workloads

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/workgang/workgang/examples/ports/bench"
	"github.com/workgang/workgang/examples/ports/filter"
	"github.com/workgang/workgang/perf/internal/harness"
)

// ports section sizes: the example's images (64x64 to 2048x2048) with 1 and
// 2 callers, 7 interleaved rounds of about 10 ms per variant (5 under
// -quick, 21 under -long); the harness's own tests (tiny) run two small
// images for 2 rounds of 1 ms.
const (
	portsRounds, portsQuickRounds, portsLongRounds = 7, 5, 21
	portsBatch                                     = 10 * time.Millisecond
	portsTinyRounds, portsTinyBatch                = 2, time.Millisecond
)

var portsTinySides = []int{16, 40}

// The limits of the ports targets: a port must beat its original on the
// smallest image with one caller, and stay within noise of it elsewhere.
const (
	portsSmallLimit = 1.0
	portsLimit      = 1.05
)

// portsResult is what the ports section measured.
type portsResult struct {
	Options bench.Options    `json:"options"`
	Rows    []bench.Row      `json:"rows"`
	Targets []harness.Target `json:"targets"`
}

// runPorts times the ports example's ported helpers against their originals.
func runPorts(h *harness.Harness) (any, error) {
	o := bench.DefaultOptions()
	o.Rounds, o.Batch = portsRounds, portsBatch
	switch c := h.Cfg; {
	case c.Tiny():
		o.Sides, o.Rounds, o.Batch = portsTinySides, portsTinyRounds, portsTinyBatch
	case c.Quick:
		o.Rounds = portsQuickRounds
	case c.Long:
		o.Rounds = portsLongRounds
	}
	fmt.Fprintf(h.Out, "sides %v, callers %v, %d interleaved rounds of about %v per variant; every output checked\n", o.Sides, o.Callers, o.Rounds, o.Batch)
	h.Status("ports: image operations")
	rows, err := bench.Run(o)
	if err != nil {
		return nil, err
	}
	h.ClearStatus()
	bench.Print(h.Out, rows)
	fmt.Fprintln(h.Out)
	return &portsResult{Options: o, Rows: rows, Targets: portsTargets(rows)}, nil
}

// portsTargets: per image size and caller count, the worst port's time
// over its original's at most portsSmallLimit on the smallest image with
// one caller, portsLimit elsewhere, among the ports that make a body's
// setup once per copy or part (not Pair.PerChunk's, shown for what
// per-chunk setup costs); and on the smallest image with one caller, the
// ForChunks blur's heap objects per call at most the original helper's.
func portsTargets(rows []bench.Row) []harness.Target {
	if len(rows) == 0 {
		return nil
	}
	type key struct{ side, callers int }
	worst := map[key]bench.Row{}
	var keys []key
	for _, r := range rows {
		if r.PerChunk() {
			continue
		}
		k := key{r.Side, r.Callers}
		w, ok := worst[k]
		if !ok {
			keys = append(keys, k)
		}
		if !ok || r.Ratio > w.Ratio {
			worst[k] = r
		}
	}
	small := slices.MinFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.side, b.side), cmp.Compare(a.callers, b.callers))
	})
	var ts []harness.Target
	for _, k := range keys {
		r, limit := worst[k], portsLimit
		if k == small {
			limit = portsSmallLimit
		}
		ts = append(ts, harness.RatioTarget(fmt.Sprintf("ports %dx%d, %d callers: worst port / its original", k.side, k.side, k.callers), reasonPorts,
			r.Ratio, 1, limit, false, fmt.Sprintf("%s %s / %s: %.1f us / %.1f us (rounds %.2f-%.2f)", r.Op, r.Port, r.Orig, r.PortNS/1e3, r.OrigNS/1e3, r.RatioMin, r.RatioMax)))
	}
	for _, r := range rows {
		if r.Side == small.side && r.Callers == small.callers && r.Op == "blur" && r.Port == filter.ForChunks {
			ts = append(ts, harness.RatioTarget(fmt.Sprintf("ports %dx%d: blur ForChunks / %s heap objects per call", r.Side, r.Side, r.Orig), reasonPortsAllocs,
				r.PortAllocs, r.OrigAllocs, 1, false, fmt.Sprintf("%.1f / %.1f", r.PortAllocs, r.OrigAllocs)))
		}
	}
	return ts
}
