package openmp

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/slots"
	"github.com/workgang/workgang/workers"
)

// construct is one row group of the table: an EPCC test.
type construct struct {
	name  string // epcc.c's name, the JSON key
	title string
	// loop marks a schedule test: a worksharing loop of loopIters iterations
	// whose reference is one thread's share of them.
	loop  bool
	sched Schedule
}

// constructs are the tests, in table order (epcc.c prints the same names).
var constructs = []construct{
	{name: "parallel", title: "PARALLEL"},
	{name: "parallel_for", title: "PARALLEL FOR"},
	{name: "for", title: "FOR (inside a region)"},
	{name: "barrier", title: "BARRIER"},
	{name: "reduction", title: "REDUCTION"},
	{name: "static", title: "schedule(static)", loop: true, sched: Schedule{Static, 0}},
	{name: "static_8", title: "schedule(static,8)", loop: true, sched: Schedule{StaticChunk, 8}},
	{name: "dynamic_1", title: "schedule(dynamic,1)", loop: true, sched: Schedule{Dynamic, 1}},
	{name: "dynamic_8", title: "schedule(dynamic,8)", loop: true, sched: Schedule{Dynamic, 8}},
	{name: "dynamic_64", title: "schedule(dynamic,64)", loop: true, sched: Schedule{Dynamic, 64}},
	{name: "guided_8", title: "schedule(guided,8)", loop: true, sched: Schedule{Guided, 8}},
}

// grainsNS is the grain sweep: total work W per construct, in ns, split
// over the threads (epcc.c sweeps the same list).
var grainsNS = []float64{250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}

// loopItersPerThread is a schedule test's iterations per thread (the loop
// has threads times as many), as schedbench's itersperthr.
const loopItersPerThread = 128

// params are the sizes of one section run, shared by every process.
type params struct {
	threads int
	rounds  int
	target  time.Duration // one measurement's length
	delayNS float64       // the delay per thread
	timeout time.Duration // one epcc process's limit
}

// mode is one way of running a construct on workgang: a row of the table.
type mode struct {
	name string
	// test runs the construct reps times; nil when it is not expressible,
	// and then note says why.
	test func(reps int)
	note string
}

// bench runs the workgang side on one long-lived set.
type bench struct {
	w          *workers.Workers
	threads    int
	delayIters int
	loopIters  int
	grainIters int // per copy, set per grain
	sums       *slots.Slots[int]
	reduceErr  error

	delayTask, reduceTask, grainTask tasks.Task
	delayBody, grainBody             func(worker, lo, hi int)
	teamDelay                        func(lo, hi int)
}

func newBench(w *workers.Workers, threads, delayIters int) *bench {
	b := &bench{w: w, threads: threads, delayIters: delayIters, loopIters: loopItersPerThread * threads, sums: slots.New[int](threads)}
	b.delayTask = tasks.Func("openmp.parallel", func(int) { b.delay() })
	b.reduceTask = tasks.Func("openmp.reduction", func(i int) {
		b.delay()
		*b.sums.At(i) += 1
	})
	b.grainTask = tasks.Func("openmp.grain", func(int) { work(b.grainIters) })
	b.delayBody = func(_, lo, hi int) {
		for range hi - lo {
			b.delay()
		}
	}
	b.grainBody = func(_, lo, hi int) {
		for range hi - lo {
			work(b.grainIters)
		}
	}
	b.teamDelay = func(lo, hi int) {
		for range hi - lo {
			b.delay()
		}
	}
	return b
}

func (b *bench) delay() { work(b.delayIters) }

// Reasons a mode is not expressible.
const (
	noTeam     = "needs gang-scheduled teams (RunTeam, Barrier, For)"
	noGuided   = "ForRange has no guided schedule (WithGuided)"
	noCyclic   = "ForRange claims chunks first come first served: no round-robin static schedule"
	modeCaller = "caller-runs"
	modePlain  = "plain"
	modeTeam   = "team"
)

// rangeModeNames name rangeModes' entries.
var rangeModeNames = [2]string{"ForRange caller-runs", "ForRange workers-only"}

// ref returns the serial reference of c: one delay, or one thread's share of
// a schedule test's loop.
func (b *bench) ref(c construct) func(reps int) {
	if c.loop {
		share := b.loopIters / b.threads
		return func(reps int) {
			for range reps {
				for range share {
					b.delay()
				}
			}
		}
	}
	return func(reps int) {
		for range reps {
			b.delay()
		}
	}
}

// modes returns workgang's ways of running c.
func (b *bench) modes(c construct) []mode {
	w, n := b.w, b.threads
	runN := func(t tasks.Task) func(int) {
		return func(reps int) {
			for range reps {
				w.RunN(t, n)
			}
		}
	}
	forRange := func(iters int, body func(worker, lo, hi int), opts []workers.RangeOption) func(int) {
		return func(reps int) {
			for range reps {
				w.ForRange(iters, body, opts...)
			}
		}
	}
	rangeRows := func(iters int, body func(worker, lo, hi int), extra ...workers.RangeOption) []mode {
		var ms []mode
		for i, m := range rangeModes {
			opts := append(append([]workers.RangeOption{workers.WithCopies(n)}, m...), extra...)
			ms = append(ms, mode{name: rangeModeNames[i], test: forRange(iters, body, opts)})
		}
		return ms
	}
	switch c.name {
	case "parallel":
		return []mode{
			{name: "RunN " + modeCaller, test: runN(tasks.CallerRuns(b.delayTask))},
			{name: "RunN " + modePlain, test: runN(b.delayTask)},
		}
	case "parallel_for":
		return rangeRows(n, b.delayBody, workers.WithChunk(1))
	case "reduction":
		return []mode{
			{name: "RunN+slots " + modeCaller, test: b.reduce(tasks.CallerRuns(b.reduceTask))},
			{name: "RunN+slots " + modePlain, test: b.reduce(b.reduceTask)},
		}
	case "for":
		return []mode{b.teamMode(func(m Member) { m.For(n, b.teamDelay, Schedule{Static, 0}) })}
	case "barrier":
		return []mode{b.teamMode(func(m Member) {
			b.delay()
			m.Barrier()
		})}
	}
	if !c.loop {
		panic("openmp: no workgang modes for construct " + c.name)
	}
	var ms []mode
	switch s := c.sched; s.Kind {
	case Static:
		ms = rangeRows(b.loopIters, b.delayBody, workers.WithChunk((b.loopIters+n-1)/n))
	case Dynamic:
		ms = rangeRows(b.loopIters, b.delayBody, workers.WithChunk(s.Chunk))
	case Guided:
		if WithGuided == nil {
			ms = []mode{{name: rangeModeNames[0], note: noGuided}, {name: rangeModeNames[1], note: noGuided}}
		} else {
			ms = rangeRows(b.loopIters, b.delayBody, WithGuided(s.Chunk))
		}
	case StaticChunk:
		ms = []mode{{name: "ForRange", note: noCyclic}}
	}
	iters := b.loopIters
	return append(ms, b.teamMode(func(m Member) { m.For(iters, b.teamDelay, c.sched) }))
}

// teamMode runs step reps times in one team run of threads copies.
func (b *bench) teamMode(step func(m Member)) mode {
	if RunTeam == nil {
		return mode{name: modeTeam, note: noTeam}
	}
	return mode{name: modeTeam, test: func(reps int) {
		RunTeam(b.w, "openmp.team", b.threads, func(m Member) {
			for range reps {
				step(m)
			}
		})
	}}
}

// reduce returns a REDUCTION test: each copy adds 1 to its slot after the
// delay, and the caller sums the slots after every run.
func (b *bench) reduce(t tasks.Task) func(int) {
	return func(reps int) {
		total := 0
		for range reps {
			b.sums.Reset()
			b.w.RunN(t, b.threads)
			total += slots.Sum(b.sums)
		}
		if total != reps*b.threads && b.reduceErr == nil {
			b.reduceErr = fmt.Errorf("openmp: reduction summed %d over %d runs of %d copies, want %d", total, reps, b.threads, reps*b.threads)
		}
	}
}

// grainModes returns workgang's ways of running the grain test.
func (b *bench) grainModes() []mode {
	w, n := b.w, b.threads
	runN := func(t tasks.Task) func(int) {
		return func(reps int) {
			for range reps {
				w.RunN(t, n)
			}
		}
	}
	ms := []mode{
		{name: "RunN " + modeCaller, test: runN(tasks.CallerRuns(b.grainTask))},
		{name: "RunN " + modePlain, test: runN(b.grainTask)},
	}
	for i, m := range rangeModes {
		opts := append([]workers.RangeOption{workers.WithCopies(n), workers.WithChunk(1)}, m...)
		ms = append(ms, mode{name: rangeModeNames[i], test: func(reps int) {
			for range reps {
				w.ForRange(n, b.grainBody, opts...)
			}
		}})
	}
	return ms
}

// grainSerial returns the serial reference of the grain test: every copy's
// share, one after another.
func (b *bench) grainSerial() func(int) {
	return func(reps int) {
		for range reps {
			work(b.grainIters * b.threads)
		}
	}
}

// timeReps returns the time of fn(reps).
func timeReps(fn func(int), reps int) time.Duration {
	start := time.Now()
	fn(reps)
	return time.Since(start)
}

// sizeReps returns the repetitions that make fn take about target: doubling
// until the middle of three timings takes a tenth of it, then scaling, as
// epcc.c's size_reps. The middle rather than the least keeps a measurement
// near its target on a loaded machine.
func sizeReps(fn func(int), target time.Duration) int {
	reps := 1
	var t time.Duration
	for {
		t = mid3(timeReps(fn, reps), timeReps(fn, reps), timeReps(fn, reps))
		if t >= target/10 || reps >= 1<<30 {
			break
		}
		reps *= 2
	}
	return max(1, int(float64(reps)*float64(target)/float64(max(t, 1))))
}

// mid3 returns the middle of a, b and c.
func mid3(a, b, c time.Duration) time.Duration {
	return max(min(a, b), min(max(a, b), c))
}

// perRep returns the time of fn(reps) per repetition, in ns.
func perRep(fn func(int), reps int) float64 {
	return float64(timeReps(fn, reps)) / float64(reps)
}
