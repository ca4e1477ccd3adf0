package interleaved

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc"

	"github.com/workgang/workgang/perf/internal/runners"
)

// forkJoin runs the n copies of one phase of an operation and returns after
// every copy returned.
type forkJoin func(p *phase)

// Implementation kinds: workgang's row, a peer (counted for "best peer") or
// the serial baseline.
const (
	kindWorkgang = iota
	kindPeer
	kindSerial
)

// Names of the peers this section adds to those of package runners.
const (
	NameConc = "conc"
	NameAnts = "ants"
)

// impl is one way to run an operation's phases. start sets it up for runs of
// up to size copies, once for the whole section, and returns its fork-join
// and the function that stops every goroutine start started and waits for
// them. desc is its legend line, {size} standing for size.
type impl struct {
	name, desc string
	kind       int
	start      func(size int) (forkJoin, func() error)
}

// impls are the section's implementations, in column order: workgang, the
// peers, serial.
var impls = []impl{
	{runners.NameWorkgang, "ONE long-lived workgang set of {size} workers, all started before timing; RunN of the op's task, plain or tasks.CallerRuns as the op says", kindWorkgang, startWorkgang},
	{runners.NameWaitGroup, "a go statement per copy + sync.WaitGroup (package runners' peer)", kindPeer, runnersPeer(runners.NameWaitGroup)},
	{runners.NameErrgroup, "an errgroup.Group per run, Go per copy, Wait (package runners' peer)", kindPeer, runnersPeer(runners.NameErrgroup)},
	{NameConc, "a github.com/sourcegraph/conc WaitGroup per run, Go per copy, Wait", kindPeer, startConc},
	{NameAnts, "one github.com/panjf2000/ants/v2 pool of {size} workers (default options), Submit per copy + sync.WaitGroup", kindPeer, startAnts},
	{runners.NameChanPool, "{size} persistent goroutines receiving copies on an unbuffered channel + sync.WaitGroup", kindPeer, startChanPool},
	{runners.NameSerial, "the copies called one after another on the caller (grain and pause only: the baseline)", kindSerial, startSerial},
}

// startWorkgang creates the section's one long-lived set (runners.LongSet:
// every worker started by a run at full parallelism, -pin honoured).
func startWorkgang(size int) (forkJoin, func() error) {
	ls := runners.NewLongSet(size)
	return func(p *phase) { ls.W.RunN(p.task, p.n) }, func() error { ls.Close(); return nil }
}

// runnersPeer returns the start function of package runners' peer called
// name, so that go+WaitGroup and errgroup are the same code in every section.
func runnersPeer(name string) func(size int) (forkJoin, func() error) {
	for _, p := range runners.Peers {
		if p.Name == name {
			return func(size int) (forkJoin, func() error) {
				run, stop := p.Start(size)
				return func(ph *phase) { run(ph.n, ph.work) }, func() error { stop(); return nil }
			}
		}
	}
	panic(fmt.Sprintf("interleaved: package runners has no peer %q", name))
}

// startConc runs each phase with a new conc.WaitGroup, as its callers do.
func startConc(int) (forkJoin, func() error) {
	return func(p *phase) {
		var wg conc.WaitGroup
		for i := range p.n {
			wg.Go(func() { p.work(i) })
		}
		wg.Wait()
	}, func() error { return nil }
}

// antsRelease is how long stopping the ants pool may wait for its workers.
const antsRelease = 10 * time.Second

// init stops the default pool ants creates when it is imported (the one
// ants.Submit uses, which nothing in the perf command uses): its purge and
// clock goroutines would otherwise tick in the background of every
// section, ants or not, and outlive every test of every package that
// links this one (the tests' leak checks would catch a failure to stop
// them). The section's own pool (startAnts) is unaffected.
func init() { _ = ants.ReleaseTimeout(antsRelease) }

// startAnts creates one ants pool of size workers with the default options
// (blocking Submit, idle workers purged after a second) and submits every
// copy of a phase, waiting with a WaitGroup.
func startAnts(size int) (forkJoin, func() error) {
	pool, err := ants.NewPool(size)
	if err != nil {
		panic(fmt.Sprintf("interleaved: ants.NewPool(%d): %v", size, err))
	}
	var wg sync.WaitGroup
	run := func(p *phase) {
		wg.Add(p.n)
		for i := range p.n {
			if err := pool.Submit(func() {
				p.work(i)
				wg.Done()
			}); err != nil {
				panic(fmt.Sprintf("interleaved: ants Submit: %v", err))
			}
		}
		wg.Wait()
	}
	stop := func() error {
		if err := pool.ReleaseTimeout(antsRelease); err != nil {
			return fmt.Errorf("interleaved: releasing the ants pool: %w", err)
		}
		return nil
	}
	return run, stop
}

// chanJob is one copy of one phase, sent to a pool goroutine.
type chanJob struct {
	work func(int)
	i    int
}

// chanPool is the pool a Go program writes by hand: size goroutines
// receiving copies on an unbuffered channel, a WaitGroup per pool counting
// the copies of the run in progress. (Package runners' chanpool differs: a
// buffered channel and a channel of completions.)
type chanPool struct {
	jobs chan chanJob
	run  sync.WaitGroup // the copies of the run in progress
	exit sync.WaitGroup // the pool's goroutines
}

// startChanPool starts the pool's size goroutines.
func startChanPool(size int) (forkJoin, func() error) {
	p := &chanPool{jobs: make(chan chanJob)}
	p.exit.Add(size)
	for range size {
		go p.serve()
	}
	return p.forkJoin, p.close
}

// serve runs copies until jobs is closed.
func (p *chanPool) serve() {
	defer p.exit.Done()
	for j := range p.jobs {
		j.work(j.i)
		p.run.Done()
	}
}

// forkJoin sends the phase's copies and waits for them.
func (p *chanPool) forkJoin(ph *phase) {
	p.run.Add(ph.n)
	for i := range ph.n {
		p.jobs <- chanJob{ph.work, i}
	}
	p.run.Wait()
}

// close stops the pool's goroutines and waits for them.
func (p *chanPool) close() error {
	close(p.jobs)
	p.exit.Wait()
	return nil
}

// startSerial calls the copies on the caller.
func startSerial(int) (forkJoin, func() error) {
	return func(p *phase) { runners.Serial(p.n, p.work) }, func() error { return nil }
}

// started is every implementation of a section, set up once.
type started struct {
	fj    []forkJoin // by index in impls
	stops []func() error
}

// startAll sets up the implementations called names (all of impls when
// names is empty) for runs of up to size copies; the others stay nil.
func startAll(size int, names ...string) *started {
	s := &started{fj: make([]forkJoin, len(impls))}
	for i, im := range impls {
		if len(names) > 0 && !slices.Contains(names, im.name) {
			continue
		}
		fj, stop := im.start(size)
		s.fj[i] = fj
		s.stops = append(s.stops, stop)
	}
	return s
}

// stop stops every started implementation, in reverse order, and returns
// the first error.
func (s *started) stop() error {
	var first error
	for i := len(s.stops) - 1; i >= 0; i-- {
		if err := s.stops[i](); err != nil && first == nil {
			first = err
		}
	}
	s.stops = nil
	return first
}
