package forkjoin

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/perf/internal/work"
	"github.com/workgang/workgang/tasks"
)

// The pause section replays a scripted collector-like pause: a fixed
// sequence of phases, each with its own parallelism (1, half or full), total
// CPU work and mode (caller-runs or plain), the way a collector runs phases on
// one long-lived worker set. Every implementation runs the same script.

// Parallelism of a scripted phase, resolved against -max.
const (
	nOne  = iota // one copy
	nHalf        // max/2, at least 1
	nFull        // max
)

// scriptPhase is one phase of the script: n copies sharing workNS of CPU work.
type scriptPhase struct {
	name       string
	n          int // nOne, nHalf or nFull
	workNS     float64
	callerRuns bool // workgang runs it as a tasks.CallerRuns task
}

// pauseScript is the pause: 14 phases, 0.5 to 100 us of work each, about
// 320 us in all, named after what a collector does in them (the names are
// labels; every phase is the same calibrated spin). Phases of one copy or
// of half parallelism hold about 4% of the work, so with 2 CPUs the best
// possible speedup over serial is about 1.9.
var pauseScript = []scriptPhase{
	{"clear-cards", nFull, 20000, false},
	{"thread-roots", nFull, 30000, true},
	{"global-roots", nOne, 2000, true},
	{"code-roots", nHalf, 5000, true},
	{"mark", nFull, 100000, false},
	{"terminate", nFull, 500, false},
	{"references", nFull, 10000, true},
	{"weak-handles", nOne, 500, true},
	{"dedup", nHalf, 3000, false},
	{"evacuate", nFull, 80000, true},
	{"update-refs", nFull, 50000, false},
	{"free-cset", nOne, 1000, false},
	{"rebuild-remsets", nFull, 20000, true},
	{"resize-tlabs", nOne, 500, true},
}

// PauseScript returns the pause script resolved for full parallelism size,
// and the caller's serial work between two pauses (PauseGapNS): what the
// pause section measures, for other sections to run the same pause.
func PauseScript(size int) []PausePhase {
	var ps []PausePhase
	for _, sp := range pauseScript {
		n := [...]int{nOne: 1, nHalf: max(1, size/2), nFull: size}[sp.n]
		ps = append(ps, PausePhase{Name: sp.name, N: n, WorkNS: sp.workNS, CallerRuns: sp.callerRuns})
	}
	return ps
}

// PauseGapNS is pauseGapNS, for PauseScript's users.
const PauseGapNS = pauseGapNS

// pauseGapNS is the caller's untimed CPU work between two pauses (the
// mutator): longer than the default spin budget, so workers that idle between
// pauses have parked, as they have between real collections.
const pauseGapNS = 100000

// Pauses per iteration and implementation, and untimed warm-up pauses.
const (
	pausesDefault = 100
	pausesQuick   = 30
	pausesTiny    = 2
	pausesLong    = 1000
	pauseWarm     = 5
)

// PausePhase is a scripted phase resolved for one run: its n, its work and
// the workgang task that runs the work.
type PausePhase struct {
	Name       string  `json:"name"`
	N          int     `json:"n"`
	WorkNS     float64 `json:"work_ns"`
	CallerRuns bool    `json:"caller_runs"`
	work       func(int)
	task       tasks.Task
}

// pauseImpl is one way to run the script: start returns the function that
// runs one phase and the function that stops whatever start started.
type pauseImpl struct {
	name, desc string
	workgang   bool
	start      func(ls *runners.LongSet, size int) (phase func(*PausePhase), stop func())
}

// pauseImpls are the implementations, serial first (the speedups'
// numerator), then the peers, workgang last.
var pauseImpls = func() []pauseImpl {
	ims := []pauseImpl{{runners.NameSerial, "every copy of every phase on the caller", false, func(*runners.LongSet, int) (func(*PausePhase), func()) {
		return func(p *PausePhase) { runners.Serial(p.N, p.work) }, func() {}
	}}}
	for _, pr := range runners.Peers {
		ims = append(ims, pauseImpl{pr.Name, pr.Desc + "; one per run of the script", false, func(_ *runners.LongSet, size int) (func(*PausePhase), func()) {
			run, stop := pr.Start(size)
			return func(p *PausePhase) { run(p.N, p.work) }, stop
		}})
	}
	return append(ims, pauseImpl{runners.NameWorkgang, "one long-lived set; each phase RunN of its task (caller-runs phases opted in)", true, func(ls *runners.LongSet, _ int) (func(*PausePhase), func()) {
		return func(p *PausePhase) { ls.W.RunN(p.task, p.N) }, func() {}
	}})
}()

// PauseImplResult is one implementation's pause times.
type PauseImplResult struct {
	Impl string `json:"impl"`
	// P50NS, P99NS and MaxNS are over every timed pause of every iteration.
	P50NS float64 `json:"p50_ns"`
	P99NS float64 `json:"p99_ns"`
	MaxNS float64 `json:"max_ns"`
	// PhaseNS is, per phase of the script, the median time of that phase.
	PhaseNS []float64 `json:"phase_ns"`
	// Speedup is serial's P50NS / P50NS.
	Speedup float64 `json:"speedup"`
}

// tail returns the implementation's pause p50 and p99.
func (x *PauseImplResult) tail() verdict.Tail { return verdict.Tail{P50: x.P50NS, P99: x.P99NS} }

// PauseResult is the pause section's result.
type PauseResult struct {
	Phases []PausePhase      `json:"phases"`
	WorkNS float64           `json:"work_ns"` // the script's total work
	IdealX float64           `json:"ideal_x"` // the best possible speedup over serial (idealSpeedup)
	GapNS  float64           `json:"gap_ns"`  // mutator work between pauses
	Pauses int               `json:"pauses"`  // timed pauses per iteration and implementation
	Impls  []PauseImplResult `json:"impls"`
}

// impl returns the named implementation's result, or nil.
func (r *PauseResult) impl(name string) *PauseImplResult {
	for i := range r.Impls {
		if r.Impls[i].Impl == name {
			return &r.Impls[i]
		}
	}
	return nil
}

// pauseCount returns the timed pauses per iteration for the configuration.
func pauseCount(c harness.Config) int {
	switch {
	case c.Long:
		return pausesLong
	case c.Tiny():
		return pausesTiny
	case c.Quick:
		return pausesQuick
	}
	return pausesDefault
}

// resolvePhases sizes the script for a set of size workers.
func resolvePhases(size int, unit float64) []PausePhase {
	ps := make([]PausePhase, len(pauseScript))
	for i, sp := range pauseScript {
		n := [...]int{nOne: 1, nHalf: max(1, size/2), nFull: size}[sp.n]
		gw := work.NewGrain(n, sp.workNS, unit)
		ps[i] = PausePhase{Name: sp.name, N: n, WorkNS: sp.workNS, CallerRuns: sp.callerRuns, work: gw.Work, task: runners.Task(gw.Work, sp.callerRuns)}
	}
	return ps
}

// idealSpeedup returns the script's total work and that work over its
// critical path when each phase's copies run at once on up to procs
// processors, with nothing lost to hand-offs: the speedup over serial no
// mechanism can beat.
func idealSpeedup(ps []PausePhase, procs int) (work, ideal float64) {
	var path float64
	for _, p := range ps {
		work += p.WorkNS
		path += p.WorkNS / float64(min(p.N, procs))
	}
	return work, work / path
}

// runPause replays the script with every implementation, interleaved per
// iteration, and reports pause percentiles and per-phase times.
func runPause(h *harness.Harness) (any, error) {
	ls := runners.NewLongSet(h.Cfg.Max)
	defer ls.Close()
	ps := resolvePhases(h.Cfg.Max, h.UnitNS())
	res := &PauseResult{Phases: ps, GapNS: pauseGapNS, Pauses: pauseCount(h.Cfg)}
	res.WorkNS, res.IdealX = idealSpeedup(ps, runtime.GOMAXPROCS(0))
	gap := work.NewGrain(1, pauseGapNS, h.UnitNS())
	fmt.Fprintf(h.Out, "a scripted pause of %d phases (n = 1 to %d, %.1f us of work in all; best possible speedup on %d Ps %.2fx),\n",
		len(ps), h.Cfg.Max, res.WorkNS/1000, runtime.GOMAXPROCS(0), res.IdealX)
	fmt.Fprintf(h.Out, "%s of mutator work on the caller between pauses; %d timed pauses per iteration, %d iterations\n",
		measure.FmtNS(pauseGapNS), res.Pauses, h.Cfg.Iters)
	tw := tabwriter.NewWriter(h.Out, 0, 0, 2, ' ', 0)
	for _, im := range pauseImpls {
		fmt.Fprintf(tw, "  %s\t%s\n", im.name, im.desc)
	}
	tw.Flush()

	pauses := make([][]time.Duration, len(pauseImpls))
	phases := make([][][]float64, len(pauseImpls)) // [impl][phase][pause]
	for i := range phases {
		phases[i] = make([][]float64, len(ps))
	}
	stamps := make([]time.Time, len(ps)+1)
	for it := range h.Cfg.Iters {
		for i, im := range pauseImpls {
			h.Status("pause iteration %d/%d %s", it+1, h.Cfg.Iters, im.name)
			phase, stop := im.start(ls, h.Cfg.Max)
			for k := range pauseWarm + res.Pauses {
				gap.Work(0)
				stamps[0] = time.Now()
				for p := range ps {
					phase(&ps[p])
					stamps[p+1] = time.Now()
				}
				if k < pauseWarm {
					continue
				}
				pauses[i] = append(pauses[i], stamps[len(ps)].Sub(stamps[0]))
				for p := range ps {
					phases[i][p] = append(phases[i][p], float64(stamps[p+1].Sub(stamps[p])))
				}
			}
			stop()
		}
	}
	for i, im := range pauseImpls {
		slices.Sort(pauses[i])
		r := PauseImplResult{
			Impl:  im.name,
			P50NS: float64(measure.Percentile(pauses[i], 50)),
			P99NS: float64(measure.Percentile(pauses[i], 99)),
			MaxNS: float64(measure.Percentile(pauses[i], 100)),
		}
		for p := range ps {
			r.PhaseNS = append(r.PhaseNS, measure.Median(phases[i][p]))
		}
		res.Impls = append(res.Impls, r)
	}
	for i := range res.Impls {
		res.Impls[i].Speedup = measure.Ratio(res.Impls[0].P50NS, res.Impls[i].P50NS)
	}
	printPause(h.Out, res)
	return res, nil
}

// bestPeer returns the fastest (by p50) implementation that is neither
// serial nor workgang's.
func (r *PauseResult) bestPeer() *PauseImplResult {
	var b *PauseImplResult
	for i, im := range pauseImpls {
		if im.workgang || im.name == runners.NameSerial {
			continue
		}
		if x := &r.Impls[i]; b == nil || x.P50NS < b.P50NS {
			b = x
		}
	}
	return b
}

// printPause prints the pause percentiles and the per-phase medians.
func printPause(w io.Writer, r *PauseResult) {
	best := r.bestPeer()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw)
	verdict.Heading(tw, true, verdict.Plain("impl"), verdict.Plain("p50 us"), verdict.Plain("p99 us"), verdict.Plain("max us"),
		verdict.HigherCol("x serial (p50)"), verdict.LowerCol("p50 / best peer's"))
	var mk verdict.Marker
	for _, x := range r.Impls {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%s\t%.2f\t\n", x.Impl, x.P50NS/1000, x.P99NS/1000, x.MaxNS/1000, mk.Speedup("%.2f", x.Speedup, 0), measure.Ratio(x.P50NS, best.P50NS))
	}
	tw.Flush()
	mk.Footnote(w)
	fmt.Fprintf(w, "best peer: %s; per-phase medians in us (each includes one clock read):\n", best.Impl)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "phase\tn\twork us\tmode\t")
	for _, x := range r.Impls {
		fmt.Fprintf(tw, "%s\t", x.Impl)
	}
	fmt.Fprintln(tw)
	for p, ph := range r.Phases {
		mode := "plain"
		if ph.CallerRuns {
			mode = "caller"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t", ph.Name, ph.N, ph.WorkNS/1000, mode)
		for _, x := range r.Impls {
			fmt.Fprintf(tw, "%.2f\t", x.PhaseNS[p]/1000)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
