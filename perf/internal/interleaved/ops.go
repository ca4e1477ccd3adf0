package interleaved

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/perf/internal/forkjoin"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/work"
	"github.com/workgang/workgang/tasks"
)

// Operation kinds.
const (
	KindEmpty = "empty" // n copies of an empty task: the cost of a fork-join itself
	KindGrain = "grain" // n copies of W of calibrated work each
	KindPause = "pause" // the scripted collector-like pause
)

// Modes of an operation: how workgang runs its task. Peers and serial run
// every mode the same way.
const (
	ModePlain  = "plain"  // RunN of a plain task: every copy on a worker
	ModeCaller = "caller" // RunN of a tasks.CallerRuns task: the caller runs copies too
	ModeScript = "script" // each phase of the pause in the mode the script gives it
)

// grainsPerCopyNS is the grain sweep: W of calibrated work per copy, in ns.
var grainsPerCopyNS = []float64{1000, 2000, 5000, 10000, 20000}

// phase is one fork-join of an operation: n copies of work, and work as the
// workgang task of the phase's mode.
type phase struct {
	n          int
	callerRuns bool
	work       func(int)
	task       tasks.Task
}

// newPhase returns the phase of n copies of work in the given mode.
func newPhase(n int, callerRuns bool, work func(int)) phase {
	return phase{n: n, callerRuns: callerRuns, work: work, task: runners.Task(work, callerRuns)}
}

// op is one operation: its phases run one after another, each a fork-join.
// Every implementation runs the same op value, so they all run the same
// copies of the same work.
type op struct {
	Kind   string
	N      int     // copies (pause: the largest phase's)
	WorkNS float64 // per copy (empty: 0; pause: the script's total work)
	Mode   string
	phases []phase
	// gap, if set, is serial work on the caller before each run of the op,
	// not timed: the mutator between two pauses, long enough that idle
	// workers have parked when the next pause starts.
	gap *work.Grain
	// serial: serial is measured as the baseline of this op.
	serial bool
}

// Name is the op's row name: kind, size and mode, e.g. "grain W=5us n=2 caller".
func (o *op) Name() string {
	switch o.Kind {
	case KindGrain:
		return fmt.Sprintf("grain W=%s n=%d %s", measure.FmtNS(o.WorkNS), o.N, o.Mode)
	case KindPause:
		return fmt.Sprintf("pause n=1..%d %s", o.N, o.Mode)
	}
	return fmt.Sprintf("empty n=%d %s", o.N, o.Mode)
}

// run runs the op once on fj.
func (o *op) run(fj forkJoin) {
	for i := range o.phases {
		fj(&o.phases[i])
	}
}

// batch runs the op runs times on fj, back to back, and returns the time of
// the runs (without the gaps; with a gap the clock is read around each run,
// adding one clock read to each) and the wall time of the whole batch.
func (o *op) batch(fj forkJoin, runs int) (timed, wall time.Duration) {
	start := time.Now()
	if o.gap == nil {
		for range runs {
			o.run(fj)
		}
		d := time.Since(start)
		return d, d
	}
	for range runs {
		o.gap.Work(0)
		t0 := time.Now()
		o.run(fj)
		timed += time.Since(t0)
	}
	return timed, time.Since(start)
}

// buildOps returns the section's operations for full parallelism size, with
// unit ns per step of work.Burn: empty runs at n = 1 and n = size in both
// modes, the grain sweep at n = size in both modes, and the pause script.
func buildOps(size int, unit float64) []*op {
	var ops []*op
	ns := []int{1, size}
	if size == 1 {
		ns = ns[:1]
	}
	for _, n := range ns {
		for _, callerRuns := range []bool{false, true} {
			ops = append(ops, &op{Kind: KindEmpty, N: n, Mode: modeOf(callerRuns), phases: []phase{newPhase(n, callerRuns, runners.Empty)}})
		}
	}
	for _, w := range grainsPerCopyNS {
		for _, callerRuns := range []bool{false, true} {
			g := work.NewGrain(size, w*float64(size), unit) // W per copy
			ops = append(ops, &op{Kind: KindGrain, N: size, WorkNS: w, Mode: modeOf(callerRuns), serial: true,
				phases: []phase{newPhase(size, callerRuns, g.Work)}})
		}
	}
	return append(ops, pauseOp(size, unit))
}

// modeOf names the mode of a task that opts in to caller-runs or not.
func modeOf(callerRuns bool) string {
	if callerRuns {
		return ModeCaller
	}
	return ModePlain
}

// pauseOp returns the pause section's script (forkjoin.PauseScript)
// resolved for full parallelism size.
func pauseOp(size int, unit float64) *op {
	o := &op{Kind: KindPause, N: size, Mode: ModeScript, serial: true, gap: work.NewGrain(1, forkjoin.PauseGapNS, unit)}
	for _, sp := range forkjoin.PauseScript(size) {
		o.phases = append(o.phases, newPhase(sp.N, sp.CallerRuns, work.NewGrain(sp.N, sp.WorkNS, unit).Work))
		o.WorkNS += sp.WorkNS
	}
	return o
}
