package forkjoin

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/perf/internal/work"
	"github.com/workgang/workgang/tasks/team"
)

// The kernel section is a numeric kernel with many short parallel phases per
// solve: the Benchmarks Game's spectral-norm. A solve runs kernelIters power
// iterations, each of which multiplies by A^T A twice, that is four parallel
// matrix-vector phases (A*v, At*v, A*v, At*v) over the N rows: 40 phases of
// about N*N/copies evaluations of A per copy.

// kernelIters is the number of power iterations per solve (the benchmark's).
const kernelIters = 10

// kernelPhases is the number of parallel phases of one solve.
const kernelPhases = 4 * kernelIters

// kernelSizes and kernelLongSizes are the N of the default and of the -long
// run; -quick keeps the smallest few.
var (
	kernelSizes     = []int{32, 64, 128, 256, 512}
	kernelLongSizes = []int{32, 64, 100, 128, 256, 512, 1000, 2000}
	kernelQuick     = []int{32, 64, 100}
	kernelTiny      = []int{32, 100}
)

// kernelBudget is about how long one implementation's timed solves at one N
// take per iteration (at least one solve): long enough that the clock and
// scheduler noise are small against it.
const kernelBudget = 3 * time.Millisecond

// evalA is the benchmark's infinite matrix A: A(i, j) = 1/((i+j)(i+j+1)/2+i+1).
func evalA(i, j int) float64 { return 1 / float64((i+j)*(i+j+1)/2+i+1) }

// spectral is one spectral-norm problem of size n. Its vectors are written by
// the phases; phase says which of the four products rows computes next.
type spectral struct {
	n         int
	u, v, tmp []float64
	phase     int // set by the goroutine calling solve before each phase
}

// newSpectral returns a problem of size n.
func newSpectral(n int) *spectral {
	return &spectral{n: n, u: make([]float64, n), v: make([]float64, n), tmp: make([]float64, n)}
}

// rows computes rows [lo, hi) of the current phase's product. Each row is a
// sum in the same order whoever computes it, so every implementation's
// result is bit-for-bit the serial one.
func (s *spectral) rows(lo, hi int) { s.rowsOf(s.phase, lo, hi) }

// rowsOf computes rows [lo, hi) of phase ph's product.
func (s *spectral) rowsOf(ph, lo, hi int) {
	switch ph % 4 {
	case 0:
		mulA(s.u, s.tmp, lo, hi, false)
	case 1:
		mulA(s.tmp, s.v, lo, hi, true)
	case 2:
		mulA(s.v, s.tmp, lo, hi, false)
	case 3:
		mulA(s.tmp, s.u, lo, hi, true)
	}
}

// mulA stores rows [lo, hi) of A*in (or At*in if transposed) in out.
func mulA(in, out []float64, lo, hi int, transposed bool) {
	for i := lo; i < hi; i++ {
		var sum float64
		for j, x := range in {
			if transposed {
				sum += evalA(j, i) * x
			} else {
				sum += evalA(i, j) * x
			}
		}
		out[i] = sum
	}
}

// solve runs the benchmark with par running each phase (s.rows over [0, n))
// and returns the spectral norm sqrt(u.v / v.v). A par that sets
// s.phase to wholeSolve runs every phase itself (the team implementation):
// solve then calls it once.
func (s *spectral) solve(par func()) float64 {
	for i := range s.u {
		s.u[i] = 1
	}
	s.phase = 0
	par()
	for ph := 1; ph < kernelPhases && s.phase != wholeSolve; ph++ {
		s.phase = ph
		par()
	}
	var vBv, vv float64
	for i := range s.u {
		vBv += s.u[i] * s.v[i]
		vv += s.v[i] * s.v[i]
	}
	return math.Sqrt(vBv / vv)
}

// wholeSolve is the phase a par leaves in s.phase to say that it ran every
// phase of the solve in its first call.
const wholeSolve = -1

// kernelImpl is one way to run the phases of a solve: par returns the
// function that runs one phase of s over its n rows with c copies (on the
// long-lived set ls where it uses workgang) and the function that stops
// whatever par started. The phase function must not allocate more than the
// mechanism itself does (closures are made once, in par).
type kernelImpl struct {
	name, desc string
	workgang   bool
	par        func(ls *runners.LongSet, s *spectral, c int) (phase func(), stop func())
}

// kernelImpls are the implementations the kernel section compares; serial
// first (the reference result and the speedups' numerator), then the peers
// and workgang's modes.
var kernelImpls = func() []kernelImpl {
	nop := func() {}
	ims := []kernelImpl{{runners.NameSerial, "every phase on the caller", false, func(_ *runners.LongSet, s *spectral, _ int) (func(), func()) {
		return func() { s.rows(0, s.n) }, nop
	}}}
	for _, pr := range runners.Peers {
		ims = append(ims, kernelImpl{pr.Name, pr.Desc + "; one block of rows per copy", false, func(_ *runners.LongSet, s *spectral, c int) (func(), func()) {
			run, stop := pr.Start(c)
			body := func(i int) { s.rows(work.Block(i, c, s.n)) }
			return func() { run(c, body) }, stop
		}})
	}
	return append(ims,
		kernelImpl{runners.NameWorkgang, "RunN of a plain task on the long-lived set, one block of rows per copy", true, func(ls *runners.LongSet, s *spectral, c int) (func(), func()) {
			return kernelRunN(ls, s, c, false), nop
		}},
		kernelImpl{runners.NameCaller, "the same task opted in with tasks.CallerRuns, on the same set", true, func(ls *runners.LongSet, s *spectral, c int) (func(), func()) {
			return kernelRunN(ls, s, c, true), nop
		}},
		kernelImpl{runners.NameForRange, "ForRange over the rows with caller-runs, on the same set", true, func(ls *runners.LongSet, s *spectral, c int) (func(), func()) {
			body := func(_, lo, hi int) { s.rows(lo, hi) }
			return func() { runners.ForRange(ls.W, s.n, body, c, true) }, nop
		}},
		kernelImpl{runners.NameTeam, "one RunTeam per solve on the same set: each member computes its block of every phase, a barrier between phases", true, kernelTeam})
}()

// kernelTeam runs a whole solve as one RunTeam of c members: member i
// computes block i of every phase and waits at a barrier before the next
// phase reads what the others wrote; the barrier orders every member's rows
// before every member's next phase, and RunTeam's return orders the last
// phase before the caller's norm.
func kernelTeam(ls *runners.LongSet, s *spectral, c int) (func(), func()) {
	fn := func(m *team.Member) {
		lo, hi := work.Block(m.ID(), c, s.n)
		for ph := range kernelPhases {
			s.rowsOf(ph, lo, hi)
			m.Barrier()
		}
	}
	return func() {
		ls.W.RunTeam("spectral-norm", c, fn)
		s.phase = wholeSolve
	}, func() {}
}

// kernelRunN runs each phase as RunN of c copies on ls, copy i computing
// block i. The caller sets s.phase before RunN; RunN's start is synchronized
// before every copy, so the copies read the phase just set.
func kernelRunN(ls *runners.LongSet, s *spectral, c int, callerRuns bool) func() {
	t := runners.Task(func(i int) { s.rows(work.Block(i, c, s.n)) }, callerRuns)
	return func() { ls.W.RunN(t, c) }
}

// KernelRow is one implementation at one N.
type KernelRow struct {
	Impl    string  `json:"impl"`
	SolveNS float64 `json:"solve_ns"` // median over iterations of the average solve
	PhaseNS float64 `json:"phase_ns"` // SolveNS / kernelPhases
	Speedup float64 `json:"speedup"`  // serial SolveNS / SolveNS
	Result  float64 `json:"result"`   // the spectral norm it computed
}

// KernelSize is every implementation at one N.
type KernelSize struct {
	N      int         `json:"n"`
	Copies int         `json:"copies"`
	Reps   int         `json:"solves"` // timed solves per iteration and implementation
	Rows   []KernelRow `json:"rows"`
}

// KernelResult is the kernel section's result.
type KernelResult struct {
	Phases int          `json:"phases"` // parallel phases per solve
	Sizes  []KernelSize `json:"sizes"`
}

// kernelNs returns the problem sizes the configuration asks for.
func kernelNs(c harness.Config) []int {
	switch {
	case c.Long:
		return kernelLongSizes
	case c.Tiny():
		return kernelTiny
	case c.Quick:
		return kernelQuick
	}
	return kernelSizes
}

// runKernel measures spectral-norm at each N for every implementation, all
// workgang modes on one long-lived set, and checks every result against
// serial.
func runKernel(h *harness.Harness) (any, error) {
	ls := runners.NewLongSet(h.Cfg.Max)
	defer ls.Close()
	fmt.Fprintf(h.Out, "spectral-norm (Benchmarks Game): %d phases per solve (%d power iterations of A*v, At*v twice);\n", kernelPhases, kernelIters)
	fmt.Fprintf(h.Out, "copies per phase = min(-max, N) = blocks of rows; workgang modes share one long-lived set of %d workers\n", h.Cfg.Max)
	tw := tabwriter.NewWriter(h.Out, 0, 0, 2, ' ', 0)
	for _, im := range kernelImpls {
		fmt.Fprintf(tw, "  %s\t%s\n", im.name, im.desc)
	}
	tw.Flush()
	fmt.Fprintf(h.Out, "median over %d iterations of the average solve; speedup = serial / implementation\n", h.Cfg.Iters)
	res := &KernelResult{Phases: kernelPhases}
	for _, n := range kernelNs(h.Cfg) {
		ks, err := measureKernel(h, ls, n)
		if err != nil {
			return nil, err
		}
		res.Sizes = append(res.Sizes, ks)
	}
	printKernel(h.Out, res)
	return res, nil
}

// measureKernel measures every implementation at size n, interleaved per
// iteration. It returns an error if an implementation's result differs from
// serial's.
func measureKernel(h *harness.Harness, ls *runners.LongSet, n int) (KernelSize, error) {
	c := min(h.Cfg.Max, n)
	s := newSpectral(n)
	pars := make([]func(), len(kernelImpls))
	for i, im := range kernelImpls {
		var stop func()
		pars[i], stop = im.par(ls, s, c)
		defer stop()
	}
	// One untimed solve each: it warms up the implementation and gives the
	// result to check; serial's also sizes the timed batches.
	ks := KernelSize{N: n, Copies: c, Reps: 1, Rows: make([]KernelRow, len(kernelImpls))}
	for i, im := range kernelImpls {
		ks.Rows[i] = KernelRow{Impl: im.name, Result: s.solve(pars[i])}
		if ref := ks.Rows[0].Result; math.Abs(ks.Rows[i].Result-ref) > 1e-12*ref {
			return ks, fmt.Errorf("kernel N=%d: %s computed %.12f, serial %.12f", n, im.name, ks.Rows[i].Result, ref)
		}
	}
	if !h.Cfg.Tiny() {
		// Size the batches from the fastest of a few warm serial solves
		// (a quarter of the budget at most): one solve can be slowed down
		// by a preemption many times over on a loaded machine.
		best := time.Duration(math.MaxInt64)
		for start := time.Now(); time.Since(start) < kernelBudget/4; {
			t0 := time.Now()
			s.solve(pars[0])
			best = min(best, time.Since(t0))
		}
		ks.Reps = max(1, int(kernelBudget/max(best, 1)))
	}
	avgs := make([][]float64, len(kernelImpls))
	for it := range h.Cfg.Iters {
		for i, im := range kernelImpls {
			h.Status("kernel N=%d iteration %d/%d %s", n, it+1, h.Cfg.Iters, im.name)
			runtime.GC()
			t0 := time.Now()
			for range ks.Reps {
				s.solve(pars[i])
			}
			avgs[i] = append(avgs[i], float64(time.Since(t0))/float64(ks.Reps))
		}
	}
	for i := range ks.Rows {
		r := &ks.Rows[i]
		r.SolveNS = measure.Median(avgs[i])
		r.PhaseNS = r.SolveNS / kernelPhases
		r.Speedup = measure.Ratio(measure.Median(avgs[0]), r.SolveNS)
	}
	return ks, nil
}

// row returns the named implementation's row, or nil.
func (ks *KernelSize) row(name string) *KernelRow {
	for i := range ks.Rows {
		if ks.Rows[i].Impl == name {
			return &ks.Rows[i]
		}
	}
	return nil
}

// best returns the fastest row among the workgang implementations (workgang
// true) or among the peers other than serial (false).
func (ks *KernelSize) best(workgang bool) *KernelRow {
	var b *KernelRow
	for i, im := range kernelImpls {
		if im.workgang != workgang || im.name == runners.NameSerial {
			continue
		}
		if r := &ks.Rows[i]; b == nil || r.SolveNS < b.SolveNS {
			b = r
		}
	}
	return b
}

// printKernel prints one line per N: solve time of serial, then each
// implementation's speedup, and the solve's result.
func printKernel(w io.Writer, res *KernelResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cols := []verdict.Col{verdict.Plain("N"), verdict.Plain("copies"), verdict.Plain("solves"), verdict.Plain("serial us"), verdict.Plain("phase us")}
	for _, im := range kernelImpls[1:] {
		cols = append(cols, verdict.HigherCol(im.name))
	}
	verdict.Heading(tw, true, append(cols, verdict.Plain("result"))...)
	var mk verdict.Marker
	for _, ks := range res.Sizes {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f\t%.2f\t", ks.N, ks.Copies, ks.Reps, ks.Rows[0].SolveNS/1000, ks.Rows[0].PhaseNS/1000)
		for _, r := range ks.Rows[1:] {
			fmt.Fprintf(tw, "%s\t", mk.Speedup("%.2f", r.Speedup, ks.Copies))
		}
		fmt.Fprintf(tw, "%.9f\t\n", ks.Rows[0].Result)
	}
	tw.Flush()
	mk.Footnote(w)
	fmt.Fprintln(w, "columns after phase us: speedup over serial; every implementation's result equals serial's (checked)")
}
