// Package openmp is the perf command's openmp section: workgang compared
// construct for construct with the two reference fork-join runtimes, GCC's
// libgomp and LLVM's libomp, in the manner of the EPCC OpenMP
// micro-benchmarks.
//
// The OpenMP side is epcc.c, built at run time into a temporary directory
// with gcc -fopenmp (libgomp) and clang -fopenmp (libomp) where those work,
// and run in a process of its own per runtime. The workgang side runs in the
// calling process on one long-lived set (workers.New("omp", GOMAXPROCS)).
// Every process calibrates the same kernel (a dependent xorshift chain, see
// kernel.go and epcc.c) in ns per iteration and sizes its delay and work from
// it, so the runtimes' figures are in the same units.
//
// The figures, per construct and runtime, over several rounds (median,
// min-max):
//
//   - the overhead of PARALLEL, PARALLEL FOR, FOR inside a parallel region,
//     BARRIER and REDUCTION around a delay of about 100 ns per thread: the
//     time per construct minus the time of one delay run serially;
//   - the overhead of a worksharing loop of 128 iterations per thread, one
//     delay each, per schedule (static, static,8, dynamic 1/8/64, guided,8),
//     minus the serial time of one thread's share. OpenMP runs it as an omp
//     for inside one parallel region (as schedbench); ForRange forks per loop;
//   - a grain sweep: total work W = 0.25-100 us split over the threads,
//     speedup = serial time / parallel time.
//
// OpenMP's master thread always takes part in a region, so workgang's
// caller-runs modes are the comparable ones; plain tasks and workers-only
// loops have no OpenMP counterpart and are shown beside them. BARRIER, FOR
// inside a region and the "team" rows of the schedules are one
// (*workers.Workers).RunTeam of n copies per measurement, a Barrier or For
// per repetition, as OpenMP's constructs inside one region (a team runs on
// workers only; the caller waits). The RunTeam and WithGuided variables are
// the hooks those rows go through; a nil hook makes its rows "not
// expressible".
//
// The mixed-process mode (mixed.go) measures the same workgang constructs in
// batches between fork-joins of go+WaitGroup and errgroup, against the same
// batches with nothing in between, and counts who ran the copies.
//
// Without a compiler with OpenMP support the section says how to get one and
// measures workgang alone.
package openmp

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/workgang/workgang/perf/internal/verdict"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// Title heads the section's output.
const Title = "openmp: workgang construct for construct against libgomp and libomp (EPCC-style, each runtime in a process of its own)"

// Options are the sizes and settings of one run. The zero value of a field
// selects its default.
type Options struct {
	// Threads is the team size: OpenMP threads, and copies per workgang run.
	// Default GOMAXPROCS.
	Threads int
	// Rounds is the number of rounds of every measurement (default 7).
	Rounds int
	// Target is the length one measurement is sized to (default 1 ms).
	Target time.Duration
	// DelayNS is the delay per thread in ns (default 100).
	DelayNS float64
	// Budget bounds the section's time: no round starts after it is spent
	// (at least one round runs). On a loaded machine a measurement sized to
	// Target can take many times longer (an OpenMP team whose threads wait
	// for each other's time slices), so the rounds, not the sizes, give
	// way. Default 6 s.
	Budget time.Duration
	// WorkerOptions are passed to workers.New for the workgang set.
	WorkerOptions []workers.Option
	// Mixed sizes the mixed-process mode (mixed.go).
	Mixed MixedOptions
	// Status, if not nil, shows progress (a line that the next call
	// replaces).
	Status func(format string, args ...any)
}

// defaults fills the zero fields of o.
func (o Options) defaults() Options {
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.Rounds == 0 {
		o.Rounds = 7
	}
	if o.Target == 0 {
		o.Target = time.Millisecond
	}
	if o.DelayNS == 0 {
		o.DelayNS = 100
	}
	if o.Budget == 0 {
		o.Budget = 6 * time.Second
	}
	if o.Status == nil {
		o.Status = func(string, ...any) {}
	}
	o.Mixed = o.Mixed.defaults()
	return o
}

// Run measures every runtime it can, prints the tables to out and returns
// the result (JSON-encodable). A missing or failing OpenMP compiler or
// runtime is reported in the result and the output, not as an error; the
// error is for what makes the whole section meaningless (bad options, a
// wrong result on the workgang side). Every goroutine Run starts has ended
// when it returns.
func Run(ctx context.Context, out io.Writer, o Options) (*Result, error) {
	o = o.defaults()
	if o.Threads < 1 || o.Threads > tasks.MaxCopies || o.Rounds < 1 || o.Target <= 0 || o.DelayNS <= 0 || o.Budget < 0 || !o.Mixed.valid() {
		return nil, fmt.Errorf("openmp: bad options: threads %d (want [1, %d]), rounds %d, target %v, delay %v ns, budget %v, mixed %+v",
			o.Threads, tasks.MaxCopies, o.Rounds, o.Target, o.DelayNS, o.Budget, o.Mixed)
	}
	p := params{threads: o.Threads, rounds: o.Rounds, target: o.Target, delayNS: o.DelayNS}
	p.timeout = nativeTimeout(p)
	res := newResult(p)
	start, probe := time.Now(), verdict.Start()

	dir, err := os.MkdirTemp("", "workgang-openmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bins := make([]string, len(compilers))
	for i, c := range compilers {
		o.Status("openmp: building epcc.c with %s -fopenmp", c.cc)
		bins[i], err = build(ctx, c, dir)
		if err != nil {
			res.addSkipped(c, err)
		}
	}
	g := newGoSide(p, o)
	defer g.close()
	var mx *mixedSide
	if !o.Mixed.Off {
		mx = newMixedSide(g, o.Mixed)
	}

	// Round after round, every runtime once: each OpenMP runtime in a fresh
	// process of one round, then a round of workgang's, so that a
	// disturbance of the shared machine hits one round of every runtime
	// rather than every round of one.
	natives := make([]*nativeRun, len(compilers))
	p1 := p
	p1.rounds = 1
	rounds := 0
	for r := range p.rounds {
		if r > 0 && time.Since(start) > o.Budget {
			break
		}
		rounds++
		for i, c := range compilers {
			if bins[i] == "" {
				continue
			}
			o.Status("openmp: %s, round %d of %d (a process of its own)", c.runtime, r+1, p.rounds)
			n, err := runNative(ctx, bins[i], p1)
			if err == nil {
				err = natives[i].merge(n)
			}
			if err != nil {
				res.addSkipped(c, fmt.Errorf("round %d: %w", r+1, err))
				bins[i], natives[i] = "", nil
				continue
			}
			if natives[i] == nil {
				natives[i] = n
			}
		}
		o.Status("openmp: workgang, round %d of %d (this process)", r+1, p.rounds)
		g.round()
		if mx != nil {
			o.Status("openmp: workgang mixed with go+WaitGroup and errgroup, round %d of %d", r+1, p.rounds)
			mx.round(r)
		}
	}
	if g.b.reduceErr != nil {
		return nil, g.b.reduceErr
	}
	if mx != nil {
		res.Mixed = mx.result()
	}
	res.Rounds = rounds
	for i, c := range compilers {
		if natives[i] != nil {
			res.addNative(c, natives[i])
		}
	}
	res.addWorkgang(g.result())
	res.finish()
	others, ok := probe.Others()
	if ok {
		res.OthersCPUs = &others
	}
	res.withheld = verdict.LoadWarning(others, ok)
	res.print(out)
	return res, nil
}

// goRun is the workgang side's figures, shaped like a nativeRun with one
// series per mode.
type goRun struct {
	nsPerIter  float64
	delayIters int
	// overhead: per construct, per mode (in modes order), one figure per
	// round; a nil series for a mode that is not expressible.
	modes    map[string][]mode
	overhead map[string][][]float64
	// grainModes name the grain series; speedup holds per grain, per mode,
	// one serial/parallel ratio per round.
	grainModes []string
	speedup    map[float64][][]float64
}

// goSide is the workgang side: one long-lived set, every test sized once,
// then measured a round at a time.
type goSide struct {
	w         *workers.Workers
	b         *bench
	p         params
	nsPerIter float64
	tests     []sizedConstruct
	grain     []mode
	grainSize []grainSize
	speedup   map[float64][][]float64
}

// sizedConstruct is a construct's modes with their repetitions.
type sizedConstruct struct {
	c          construct
	ref        func(int)
	refReps    int
	modes      []mode
	reps       []int
	overheadNS [][]float64 // per mode, per round
}

// grainSize is a grain's repetitions: serial's and each mode's.
type grainSize struct {
	serialReps int
	reps       []int
}

// newGoSide creates the set, calibrates the kernel and sizes every test.
func newGoSide(p params, o Options) *goSide {
	g := &goSide{p: p, w: workers.New("omp", max(runtime.GOMAXPROCS(0), p.threads), o.WorkerOptions...),
		nsPerIter: calibrateKernel(), speedup: map[float64][][]float64{}}
	o.Status("openmp: workgang, sizing the tests")
	g.b = newBench(g.w, p.threads, itersFor(p.delayNS, g.nsPerIter))
	for _, c := range constructs {
		s := sizedConstruct{c: c, ref: g.b.ref(c), modes: g.b.modes(c)}
		s.refReps = sizeReps(s.ref, p.target)
		s.reps = make([]int, len(s.modes))
		s.overheadNS = make([][]float64, len(s.modes))
		for i, m := range s.modes {
			if m.test != nil {
				s.reps[i] = sizeReps(m.test, p.target)
			}
		}
		g.tests = append(g.tests, s)
	}
	g.grain = g.b.grainModes()
	serial := g.b.grainSerial()
	for _, wns := range grainsNS {
		g.setGrain(wns)
		gs := grainSize{serialReps: sizeReps(serial, p.target)}
		for _, m := range g.grain {
			gs.reps = append(gs.reps, sizeReps(m.test, p.target))
		}
		g.grainSize = append(g.grainSize, gs)
		g.speedup[wns] = make([][]float64, len(g.grain))
	}
	return g
}

// setGrain sizes the grain test's copies for a total work of wns.
func (g *goSide) setGrain(wns float64) {
	g.b.grainIters = itersFor(wns/float64(g.p.threads), g.nsPerIter)
}

// round measures every construct and grain once.
func (g *goSide) round() {
	for _, s := range g.tests {
		ref := perRep(s.ref, s.refReps)
		for i, m := range s.modes {
			if m.test != nil {
				s.overheadNS[i] = append(s.overheadNS[i], perRep(m.test, s.reps[i])-ref)
			}
		}
	}
	serial := g.b.grainSerial()
	for gi, wns := range grainsNS {
		g.setGrain(wns)
		ser := perRep(serial, g.grainSize[gi].serialReps)
		for i, m := range g.grain {
			g.speedup[wns][i] = append(g.speedup[wns][i], ser/perRep(m.test, g.grainSize[gi].reps[i]))
		}
	}
}

// result returns the figures of the rounds so far.
func (g *goSide) result() *goRun {
	r := &goRun{nsPerIter: g.nsPerIter, delayIters: g.b.delayIters, modes: map[string][]mode{},
		overhead: map[string][][]float64{}, speedup: g.speedup}
	for _, s := range g.tests {
		r.modes[s.c.name] = s.modes
		r.overhead[s.c.name] = s.overheadNS
	}
	for _, m := range g.grain {
		r.grainModes = append(r.grainModes, m.name)
	}
	return r
}

// close closes the set; its workers have exited when it returns.
func (g *goSide) close() { g.w.Close() }
