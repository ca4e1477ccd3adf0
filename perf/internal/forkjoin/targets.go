package forkjoin

import (
	"fmt"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
)

// The sections' performance goals (harness.Section.Targets): each a ratio of
// two figures measured in this run, with the reason the goal exists; the
// targets section (-targets) prints them.

// The goals' limits, each on a ratio of medians.
const (
	surplusLimit      = 1.10 // surplus set / exact set, both modes, 5 and 50 us per copy
	pauseSerialLimit  = 1.85 // serial p50 / workgang p50, at least
	pauseTailLimit    = 1.0  // workgang p99 / serial p99, at most
	pausePeerLimit    = 0.7  // workgang p50 / best peer's p50, at most
	kernelPeerLimit   = 1.0  // best workgang mode / best peer, at every N
	kernelSerialLimit = 1.0  // ForRange / serial for N >= kernelSerialFromN
	kernelSerialFromN = 64
	emptyPeerLimit    = 1.0 // full, every copy on workers / best peer
	emptyPingLimit    = 1.5 // full, every copy on workers / ping-pong
	breakEvenLimit    = 0.5 // break-even grain at n = 2: workgang / go+WaitGroup
)

// Reasons shared by several targets.
const (
	reasonEmptyPeer = "a run on parked persistent workers must cost no more than the cheapest way to start goroutines, or keeping a set is not worth it"
	reasonEmptyPing = "the spinning ping-pong is the cheapest hand-off two goroutines can do; a run should stay close to it"
	reasonSurplus   = "workers a long-lived set does not need for a run must not slow the run (they must not spin on the CPUs the copies run on)"
	reasonKernel    = "a numeric kernel of many short phases must not run slower on workgang than with goroutines per phase"
	reasonKernelFR  = "ForRange (the caller takes part) must never lose to serial once a phase has some work"
)

// ratioGoal is a target on the peers section: at level, row num's median
// average divided by row den's is at most limit.
type ratioGoal struct {
	level, num, den string
	limit           float64
	reason          string
}

// ratioGoals are the empty-task targets on the peers section's rows.
var ratioGoals = []ratioGoal{
	{"min", runners.NameCaller, runners.NameWorkgang, 1.0 / 20, "a run of one copy that the caller may run must cost a small fraction of a hand-off to a worker"},
	{"min", runners.NameCaller, runners.NameSerial, 10, "a caller-runs run of one copy must cost little more than calling the copy"},
	{"full", runners.NameWorkgang, runners.NameWaitGroup, 0.4, "waking parked workers must be clearly cheaper than starting a goroutine per copy"},
	{"full", runners.NameWorkgang, runners.NameErrgroup, 0.4, "waking parked workers must be clearly cheaper than an errgroup per run"},
	{"full", runners.NameWorkgang, runners.NameChanPool, 0.5, "workgang must beat the pool a Go program writes by hand"},
	{"full", runners.NameWorkgang, runners.NamePingPong, 4, reasonEmptyPing},
}

// peersTargets, grainTargets, ... are the sections' Targets functions.
func peersTargets(_ *harness.Harness, res any) []harness.Target {
	return peerTargets(res.(*peersResult))
}

func grainTargets(h *harness.Harness, res any) []harness.Target {
	return breakEvenTargets(h, res.(*GrainResult))
}

func surplusSectionTargets(_ *harness.Harness, res any) []harness.Target {
	return surplusTargets(res.(*surplusResult))
}

func pauseSectionTargets(h *harness.Harness, res any) []harness.Target {
	return pauseTargets(res.(*PauseResult), h.Header.GOMAXPROCS)
}

func kernelSectionTargets(_ *harness.Harness, res any) []harness.Target {
	return kernelTargets(res.(*KernelResult))
}

// peerTargets are the empty-task targets: the ratio goals, no allocations,
// and every copy on workers at full parallelism, on fresh sets and on the
// long-lived set, against the best peer and the ping-pong.
func peerTargets(p *peersResult) []harness.Target {
	var ts []harness.Target
	for _, g := range ratioGoals {
		num, den := p.row(g.level, g.num), p.row(g.level, g.den)
		name := fmt.Sprintf("%s: %s / %s", g.level, g.num, g.den)
		if num == nil || den == nil {
			ts = append(ts, harness.RatioTarget(name, g.reason, 0, 0, g.limit, false, "not measured"))
			continue
		}
		ts = append(ts, harness.RatioTarget(name, g.reason, num.MedianAvgNS, den.MedianAvgNS, g.limit, false,
			fmt.Sprintf("%.1f ns / %.1f ns (n=%d)", num.MedianAvgNS, den.MedianAvgNS, levelN(p, g.level))))
	}
	ts = append(ts, allocTarget(p))
	ping, best := p.row("full", runners.NamePingPong), p.bestPeer("full")
	if ping == nil || best == nil {
		return ts
	}
	n := levelN(p, "full")
	for _, name := range []string{runners.NameWorkgang, runners.NameOneWorkgang} {
		r := p.row("full", name)
		if r == nil {
			continue
		}
		ts = append(ts,
			harness.RatioTarget(fmt.Sprintf("full: %s / best peer", name), reasonEmptyPeer, r.MedianAvgNS, best.MedianAvgNS, emptyPeerLimit, false,
				fmt.Sprintf("%.1f ns / %.1f ns %s (n=%d)", r.MedianAvgNS, best.MedianAvgNS, best.Impl, n)),
			harness.RatioTarget(fmt.Sprintf("full: %s / %s", name, runners.NamePingPong), reasonEmptyPing, r.MedianAvgNS, ping.MedianAvgNS, emptyPingLimit, false,
				fmt.Sprintf("%.1f ns / %.1f ns (n=%d)", r.MedianAvgNS, ping.MedianAvgNS, n)))
	}
	return ts
}

// levelN returns the n of the peers group labelled label.
func levelN(p *peersResult, label string) int {
	for _, g := range p.Groups {
		if g.Label == label {
			return g.N
		}
	}
	return 0
}

// allocTarget checks that no workgang row allocates per run.
func allocTarget(p *peersResult) harness.Target {
	worst, most := "", 0.0
	for _, g := range p.Groups {
		for _, r := range g.Rows {
			if runners.IsWorkgang(r.Impl) && (worst == "" || float64(r.AllocsPerRun) > most) {
				most = float64(r.AllocsPerRun)
				worst = fmt.Sprintf("%s %s (n=%d)", g.Label, r.Impl, g.N)
			}
		}
	}
	t := harness.RatioTarget("allocs/run of workgang rows (max)", "a run must not allocate, so that dispatching never feeds the garbage collector",
		most, 1, 0, false, "worst: "+worst)
	// An allocation count of 0 is a measurement (the ratio's N/A rule is for
	// times, where 0 means none).
	t.Ratio, t.Status = most, harness.PassIf(most <= 0, worst == "")
	return t
}

// breakEvenTargets compare each workgang mode's break-even grain at n = 2
// with go+WaitGroup's.
func breakEvenTargets(h *harness.Harness, g *GrainResult) []harness.Target {
	var ts []harness.Target
	for _, mode := range []string{runners.NameCaller, runners.NameWorkgang} {
		t := harness.RatioTarget(fmt.Sprintf("n=2 break-even: %s / %s", mode, runners.NameWaitGroup),
			"workgang should pay off from half the work per phase that go+WaitGroup needs", 0, 0, breakEvenLimit, false, "")
		s := g.sweep(2)
		switch {
		case s == nil:
			t.Status, t.Detail = harness.StatusNA, "no sweep at n=2"
		case h.Header.GOMAXPROCS < 2:
			t.Status, t.Detail = harness.StatusNA, "GOMAXPROCS=1: nothing runs in parallel, any speedup above 1 is noise"
		default:
			m, wg := s.impl(mode), s.impl(runners.NameWaitGroup)
			t.Detail = fmt.Sprintf("%s / %s", fmtBreakEven(m.BreakEvenNS, m.BreakEvenKind), fmtBreakEven(wg.BreakEvenNS, wg.BreakEvenKind))
			compareBreakEven(&t, m, wg)
		}
		ts = append(ts, t)
	}
	return ts
}

// compareBreakEven sets t's ratio and status from two break-even grains,
// treating the open-ended kinds (below the sweep, never) conservatively.
func compareBreakEven(t *harness.Target, m, wg *GrainImpl) {
	t.Ratio, t.UpperBound = 0, false
	switch {
	case m.BreakEvenKind == beNone && wg.BreakEvenKind == beNone:
		t.Status = harness.StatusNA // neither pays off anywhere in the sweep
	case m.BreakEvenKind == beNone:
		t.Status = harness.StatusMiss
	case wg.BreakEvenKind == beNone:
		t.Status = harness.StatusPass // only workgang pays off: the ratio is 0
	case m.BreakEvenKind == beBelow && wg.BreakEvenKind == beBelow:
		t.Status = harness.StatusNA // both pay off at the smallest grain
	default:
		t.Ratio = m.BreakEvenNS / wg.BreakEvenNS
		t.UpperBound = m.BreakEvenKind == beBelow
		t.Status = harness.PassIf(t.Ratio <= t.Limit, false)
		if t.UpperBound && t.Status == harness.StatusMiss {
			t.Status = harness.StatusNA // an upper bound above the limit decides nothing
		}
	}
}

// surplusTargets checks every surplus case.
func surplusTargets(r *surplusResult) []harness.Target {
	var ts []harness.Target
	for _, c := range r.Cases {
		ts = append(ts, harness.RatioTarget(
			fmt.Sprintf("surplus: %s n=%d %s/copy, %d created / %d", c.Mode, c.N, measure.FmtNS(c.CopyNS), c.Created, c.Needed), reasonSurplus,
			c.SurplusNS, c.ExactNS, surplusLimit, false,
			fmt.Sprintf("%.2f us / %.2f us", c.SurplusNS/1000, c.ExactNS/1000)))
	}
	return ts
}

// pauseTargets checks workgang's pause against serial (p50 and p99) and
// against the best peer (p50).
func pauseTargets(r *PauseResult, procs int) []harness.Target {
	serial, wg, best := r.impl(runners.NameSerial), r.impl(runners.NameWorkgang), r.bestPeer()
	if serial == nil || wg == nil || best == nil {
		return nil
	}
	reason := fmt.Sprintf("a pause of short phases should get most of the best possible speedup (%.2fx here, the script's limit on %d CPUs), and no longer a tail than serial's",
		r.IdealX, procs)
	return []harness.Target{
		harness.RatioTarget("pause p50: serial / workgang", reason, serial.P50NS, wg.P50NS, pauseSerialLimit, true,
			fmt.Sprintf("%.1f us / %.1f us", serial.P50NS/1000, wg.P50NS/1000)),
		harness.RatioTarget("pause p99: workgang / serial", reason, wg.P99NS, serial.P99NS, pauseTailLimit, false,
			fmt.Sprintf("%.1f us / %.1f us", wg.P99NS/1000, serial.P99NS/1000)),
		harness.RatioTarget("pause p50: workgang / best peer", "a pause of many short phases of varying n is what workgang is for: it must be clearly faster than any peer",
			wg.P50NS, best.P50NS, pausePeerLimit, false,
			fmt.Sprintf("%.1f us / %.1f us %s", wg.P50NS/1000, best.P50NS/1000, best.Impl)),
	}
}

// kernelTargets checks, at every N, workgang's best mode against the best
// peer, and from kernelSerialFromN on ForRange against serial.
func kernelTargets(r *KernelResult) []harness.Target {
	var ts []harness.Target
	for i := range r.Sizes {
		ks := &r.Sizes[i]
		wg, peer := ks.best(true), ks.best(false)
		if wg != nil && peer != nil {
			ts = append(ts, harness.RatioTarget(fmt.Sprintf("kernel N=%d: best workgang / best peer", ks.N), reasonKernel,
				wg.SolveNS, peer.SolveNS, kernelPeerLimit, false,
				fmt.Sprintf("%.1f us %s / %.1f us %s", wg.SolveNS/1000, wg.Impl, peer.SolveNS/1000, peer.Impl)))
		}
	}
	for i := range r.Sizes {
		ks := &r.Sizes[i]
		fr, serial := ks.row(runners.NameForRange), ks.row(runners.NameSerial)
		if ks.N >= kernelSerialFromN && fr != nil && serial != nil {
			ts = append(ts, harness.RatioTarget(fmt.Sprintf("kernel N=%d: %s / serial", ks.N, runners.NameForRange), reasonKernelFR,
				fr.SolveNS, serial.SolveNS, kernelSerialLimit, false,
				fmt.Sprintf("%.1f us / %.1f us", fr.SolveNS/1000, serial.SolveNS/1000)))
		}
	}
	return ts
}
