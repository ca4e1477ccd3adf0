package workloads

import (
	"fmt"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// The gc section's goals: on a large heap the mark's parallel speed decides,
// on a small one the cost of starting a phase.
const (
	gcLargeVsSerial = 1.6  // large heap: serial p50 / workgang p50, at least
	gcLargeVsPeers  = 1.02 // large heap: workgang p50 / each peer's
	gcSmallVsPeers  = 0.7  // small heap: workgang p50 / best peer's
)

// Reasons of the gc section's targets.
const (
	reasonGCLarge = "on a large heap the mark's parallel speed decides: workgang must get most of the speedup and keep up with goroutines"
	reasonGCSmall = "on a small heap phases take microseconds: starting a phase must cost much less than starting goroutines"
)

func gcSectionTargets(_ *harness.Harness, res any) []harness.Target {
	var ts []harness.Target
	for _, hp := range res.(GCResult).Heaps {
		ts = append(ts, gcTargets(hp)...)
	}
	return ts
}

func httpdSectionTargets(_ *harness.Harness, res any) []harness.Target {
	return res.(*httpdResult).Targets
}

func sharedSectionTargets(_ *harness.Harness, res any) []harness.Target {
	return res.(*sharedResult).Targets
}

func powSectionTargets(_ *harness.Harness, res any) []harness.Target {
	return res.(*powResult).Targets
}

func portsSectionTargets(_ *harness.Harness, res any) []harness.Target {
	return res.(*portsResult).Targets
}

// gcTargets checks one heap of the gc section: on the large heap workgang's
// pause p50 against serial and every peer, on the small one against the best
// peer.
func gcTargets(r GCHeap) []harness.Target {
	wg, sv := r.row(runners.NameWorkgang), r.row(runners.NameSerial)
	if wg == nil || sv == nil {
		return nil
	}
	var ts []harness.Target
	switch r.Name {
	case "large":
		ts = append(ts, harness.RatioTarget("gc large: serial / workgang pause p50", reasonGCLarge, sv.P50NS, wg.P50NS, gcLargeVsSerial, true,
			fmt.Sprintf("%.0f us / %.0f us", sv.P50NS/1e3, wg.P50NS/1e3)))
		for _, p := range runners.Peers {
			if x := r.row(p.Name); x != nil {
				ts = append(ts, harness.RatioTarget("gc large: workgang / "+p.Name+" pause p50", reasonGCLarge, wg.P50NS, x.P50NS, gcLargeVsPeers, false,
					fmt.Sprintf("%.0f us / %.0f us", wg.P50NS/1e3, x.P50NS/1e3)))
			}
		}
	case "small":
		var best *GCRow
		for _, p := range runners.Peers {
			if x := r.row(p.Name); x != nil && (best == nil || x.P50NS < best.P50NS) {
				best = x
			}
		}
		if best != nil {
			ts = append(ts, harness.RatioTarget("gc small: workgang / best peer pause p50", reasonGCSmall, wg.P50NS, best.P50NS, gcSmallVsPeers, false,
				fmt.Sprintf("%.1f us / %.1f us (%s)", wg.P50NS/1e3, best.P50NS/1e3, best.Impl)))
		}
	}
	return ts
}
