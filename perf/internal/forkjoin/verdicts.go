package forkjoin

import (
	"fmt"
	"strings"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
)

// The sections' verdicts (harness.Section.Verdict): what each compared,
// which did better and by how much, a line each, printed after the
// section's tables. A level measured under another's name (half at -max 2)
// gets its line too, saying so.

// perLevel returns a verdict line per shown level: line(lv) for a measured
// one, the measured level's line for one with the same n.
func perLevel(size int, line func(lv level) string) []string {
	var out []string
	for _, sl := range shownLevels(size) {
		if sl.SameAs != "" {
			out = append(out, fmt.Sprintf("%s (n=%d), same n as %s: %s", sl.Label, sl.N, sl.SameAs, line(level{sl.SameAs, sl.N})))
			continue
		}
		out = append(out, fmt.Sprintf("%s (n=%d): %s", sl.Label, sl.N, line(sl.level)))
	}
	return out
}

// dispatchVerdict compares workgang's two modes at every level, on fresh
// sets and on the long-lived set: the batches' average, and the per-run p50
// and p99.
func dispatchVerdict(h *harness.Harness, res any) []string {
	rs, _ := res.([]dispatchSetup)
	find := func(lv level, mode string) *dispatchSetup {
		for i := range rs {
			if rs[i].level == lv && rs[i].Mode == mode {
				return &rs[i]
			}
		}
		return &dispatchSetup{}
	}
	compare := func(c, w *dispatchSetup) string {
		return fmt.Sprintf("%.3f us per run against plain %.3f us: %s (%s)", c.MedianAvgNS/1e3, w.MedianAvgNS/1e3,
			verdict.Times(c.MedianAvgNS, w.MedianAvgNS), verdict.Tails("caller-runs", tailOf(c.SetupStats), "plain", tailOf(w.SetupStats)))
	}
	lines := perLevel(h.Cfg.Max, func(lv level) string {
		return fmt.Sprintf("caller-runs %s; on the long-lived set %s",
			compare(find(lv, runners.NameCaller), find(lv, runners.NameWorkgang)),
			compare(find(lv, runners.NameOneCaller), find(lv, runners.NameOneWorkgang)))
	})
	return append(lines, "(median of the batch averages, and of the per-run latencies, "+verdict.Lower+")")
}

// tailOf returns a setup's per-run p50 and p99.
func tailOf(s measure.SetupStats) verdict.Tail { return verdict.Tail{P50: s.P50NS, P99: s.P99NS} }

// peersVerdict compares workgang's two modes with the fastest peer at every
// level: the batches' average, and the per-run p50 and p99.
func peersVerdict(h *harness.Harness, res any) []string {
	p, _ := res.(*peersResult)
	lines := perLevel(h.Cfg.Max, func(lv level) string {
		best, w, c := p.bestPeer(lv.Label), p.row(lv.Label, runners.NameWorkgang), p.row(lv.Label, runners.NameCaller)
		if best == nil || w == nil || c == nil {
			return "not measured"
		}
		bt := tailOf(best.SetupStats)
		return fmt.Sprintf("the fastest peer is %s, %.0f ns per run; workgang+caller %.0f ns: %s (%s); workgang %.0f ns: %s (%s)",
			best.Impl, best.MedianAvgNS, c.MedianAvgNS, verdict.Times(c.MedianAvgNS, best.MedianAvgNS),
			verdict.Tails("workgang+caller", tailOf(c.SetupStats), best.Impl, bt),
			w.MedianAvgNS, verdict.Times(w.MedianAvgNS, best.MedianAvgNS), verdict.Tails("workgang", tailOf(w.SetupStats), best.Impl, bt))
	})
	return append(lines, "(median of the batch averages of an empty task, and of its per-run latencies: the cost of a fork-join itself, "+verdict.Lower+")")
}

// grainVerdict names, per n, the break-even grains of workgang's rows and
// of the best peer, and the best speedup at the largest grain.
func grainVerdict(_ *harness.Harness, res any) []string {
	g, _ := res.(*GrainResult)
	var lines []string
	for _, sw := range g.Sweeps {
		var wg []string
		var peer *GrainImpl
		for i := range sw.Impls {
			gi := &sw.Impls[i]
			switch {
			case strings.HasPrefix(gi.Impl, "workgang") || strings.HasPrefix(gi.Impl, "1set:"):
				wg = append(wg, fmt.Sprintf("%s %s", gi.Impl, fmtBreakEven(gi.BreakEvenNS, gi.BreakEvenKind)))
			case gi.Impl != runners.NamePingPong && (peer == nil || earlierBreakEven(gi, peer)):
				peer = gi
			}
		}
		line := fmt.Sprintf("n=%d: break-even W (from which on it beats serial, %s): %s", sw.N, verdict.Lower, strings.Join(wg, ", "))
		if peer != nil {
			line += fmt.Sprintf("; best peer %s %s", peer.Impl, fmtBreakEven(peer.BreakEvenNS, peer.BreakEvenKind))
		}
		last := len(sw.GrainsNS) - 1
		var top *GrainImpl
		for i := range sw.Impls {
			if gi := &sw.Impls[i]; gi.Impl != runners.NamePingPong && (top == nil || gi.Speedup[last] > top.Speedup[last]) {
				top = gi
			}
		}
		if top != nil {
			line += fmt.Sprintf("; at W=%s the best speedup is %s's %s (%s, at most %d)", measure.FmtNS(sw.GrainsNS[last]), top.Impl,
				verdict.Speedup(top.Speedup[last], sw.N), verdict.Higher, min(sw.N, verdict.CPUs()))
		}
		lines = append(lines, line)
	}
	return lines
}

// earlierBreakEven reports whether a breaks even at a smaller grain than b
// (nil: never).
func earlierBreakEven(a, b *GrainImpl) bool {
	rank := func(g *GrainImpl) (int, float64) {
		switch {
		case g == nil || g.BreakEvenKind == beNone:
			return 2, 0
		case g.BreakEvenKind == beBelow:
			return 0, g.BreakEvenNS
		}
		return 1, g.BreakEvenNS
	}
	ka, va := rank(a)
	kb, vb := rank(b)
	return ka < kb || ka == kb && va < vb
}

// surplusVerdict gives the range of surplus/exact over the cases.
func surplusVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(*surplusResult)
	if r == nil || len(r.Cases) == 0 {
		return nil
	}
	lo, hi := r.Cases[0], r.Cases[0]
	for _, c := range r.Cases {
		if c.Ratio < lo.Ratio {
			lo = c
		}
		if c.Ratio > hi.Ratio {
			hi = c
		}
	}
	name := func(c surplusCase) string {
		return fmt.Sprintf("%s n=%d %s per copy", c.Mode, c.N, measure.FmtNS(c.CopyNS))
	}
	return []string{fmt.Sprintf("a run on the larger long-lived set took %.2fx (%s) to %.2fx (%s) the time on a set of exactly the workers it needs (%s; above 1: the idle workers cost the run)",
		lo.Ratio, name(lo), hi.Ratio, name(hi), verdict.Lower)}
}

// pauseVerdict compares workgang's pause with serial's and the best peer's,
// at p50 and at p99.
func pauseVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(*PauseResult)
	w, serial, best := r.impl(runners.NameWorkgang), r.impl(runners.NameSerial), r.bestPeer()
	if w == nil || serial == nil || best == nil {
		return nil
	}
	return []string{
		fmt.Sprintf("workgang's pause p50 %.1f us, p99 %.1f us: speedup over serial at p50 %s (%s; the best possible on %d CPUs is %.2fx); %s (%s)",
			w.P50NS/1e3, w.P99NS/1e3, verdict.Speedup(w.Speedup, 0), verdict.Higher, verdict.CPUs(), r.IdealX,
			verdict.Tails("workgang", w.tail(), runners.NameSerial, serial.tail()), verdict.Lower),
		fmt.Sprintf("against the fastest peer, %s (p50 %.1f us, p99 %.1f us): %s (%s)", best.Impl, best.P50NS/1e3, best.P99NS/1e3,
			verdict.Tails("workgang", w.tail(), best.Impl, best.tail()), verdict.Lower),
	}
}

// kernelVerdict gives, per N, the best workgang row's and the best peer's
// speedup over serial.
func kernelVerdict(_ *harness.Harness, res any) []string {
	r, _ := res.(*KernelResult)
	var lines []string
	for i := range r.Sizes {
		ks := &r.Sizes[i]
		w, p := ks.best(true), ks.best(false)
		if w == nil || p == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("N=%d: speedup over serial (%s): best workgang row %s %s, best peer %s %s",
			ks.N, verdict.Higher, w.Impl, verdict.Speedup(w.Speedup, ks.Copies), p.Impl, verdict.Speedup(p.Speedup, ks.Copies)))
	}
	return lines
}
