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
// loops have no OpenMP counterpart and are shown beside them. BARRIER and FOR
// inside a region need gang-scheduled teams (the RunTeam hook) and are
// reported as not expressible while the hook is nil.
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
	// Rounds is the number of rounds of every measurement (default 5).
	Rounds int
	// Target is the length one measurement is sized to (default 1 ms).
	Target time.Duration
	// DelayNS is the delay per thread in ns (default 100).
	DelayNS float64
	// WorkerOptions are passed to workers.New for the workgang set.
	WorkerOptions []workers.Option
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
		o.Rounds = 5
	}
	if o.Target == 0 {
		o.Target = time.Millisecond
	}
	if o.DelayNS == 0 {
		o.DelayNS = 100
	}
	if o.Status == nil {
		o.Status = func(string, ...any) {}
	}
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
	if o.Threads < 1 || o.Threads > workers.MaxLimit || o.Rounds < 1 || o.Target <= 0 || o.DelayNS <= 0 {
		return nil, fmt.Errorf("openmp: bad options: threads %d (want [1, %d]), rounds %d, target %v, delay %v ns",
			o.Threads, workers.MaxLimit, o.Rounds, o.Target, o.DelayNS)
	}
	p := params{threads: o.Threads, rounds: o.Rounds, target: o.Target, delayNS: o.DelayNS}
	p.timeout = nativeTimeout(p)
	res := newResult(p)

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
	for i, c := range compilers {
		if bins[i] == "" {
			continue
		}
		o.Status("openmp: %s (%d rounds, in a process of its own)", c.runtime, p.rounds)
		n, err := runNative(ctx, bins[i], p)
		if err != nil {
			res.addSkipped(c, err)
			continue
		}
		res.addNative(c, n)
	}
	o.Status("openmp: workgang (%d rounds, in this process)", p.rounds)
	g, err := runWorkgang(p, o)
	if err != nil {
		return nil, err
	}
	res.addWorkgang(g)
	res.finish()
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

// runWorkgang measures the workgang side on one long-lived set.
func runWorkgang(p params, o Options) (*goRun, error) {
	w := workers.New("omp", max(runtime.GOMAXPROCS(0), p.threads), o.WorkerOptions...)
	defer w.Close()
	g := &goRun{nsPerIter: calibrateKernel(), modes: map[string][]mode{}, overhead: map[string][][]float64{}, speedup: map[float64][][]float64{}}
	g.delayIters = itersFor(p.delayNS, g.nsPerIter)
	b := newBench(w, p.threads, g.delayIters)

	// Size every test once, then run the rounds: a round measures every
	// construct once, so that a disturbance hits one round of many
	// constructs rather than every round of one.
	type sized struct {
		c          construct
		ref        func(int)
		refReps    int
		modes      []mode
		reps       []int
		overheadNS [][]float64
	}
	var all []sized
	for _, c := range constructs {
		s := sized{c: c, ref: b.ref(c), modes: b.modes(c)}
		s.refReps = sizeReps(s.ref, p.target)
		s.reps = make([]int, len(s.modes))
		s.overheadNS = make([][]float64, len(s.modes))
		for i, m := range s.modes {
			if m.test != nil {
				s.reps[i] = sizeReps(m.test, p.target)
			}
		}
		all = append(all, s)
	}
	for r := range p.rounds {
		o.Status("openmp: workgang constructs, round %d of %d", r+1, p.rounds)
		for _, s := range all {
			ref := perRep(s.ref, s.refReps)
			for i, m := range s.modes {
				if m.test != nil {
					s.overheadNS[i] = append(s.overheadNS[i], perRep(m.test, s.reps[i])-ref)
				}
			}
		}
	}
	for _, s := range all {
		g.modes[s.c.name] = s.modes
		g.overhead[s.c.name] = s.overheadNS
	}

	gm := b.grainModes()
	for _, m := range gm {
		g.grainModes = append(g.grainModes, m.name)
	}
	serial := b.grainSerial()
	type grainSize struct{ serialReps, reps []int }
	sizes := make([]grainSize, len(grainsNS))
	for gi, wns := range grainsNS {
		b.grainIters = itersFor(wns/float64(p.threads), g.nsPerIter)
		sizes[gi].serialReps = []int{sizeReps(serial, p.target)}
		for _, m := range gm {
			sizes[gi].reps = append(sizes[gi].reps, sizeReps(m.test, p.target))
		}
		g.speedup[wns] = make([][]float64, len(gm))
	}
	for r := range p.rounds {
		o.Status("openmp: workgang grain sweep, round %d of %d", r+1, p.rounds)
		for gi, wns := range grainsNS {
			b.grainIters = itersFor(wns/float64(p.threads), g.nsPerIter)
			ser := perRep(serial, sizes[gi].serialReps[0])
			for i, m := range gm {
				g.speedup[wns][i] = append(g.speedup[wns][i], ser/perRep(m.test, sizes[gi].reps[i]))
			}
		}
	}
	return g, b.reduceErr
}
