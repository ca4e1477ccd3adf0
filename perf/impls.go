package main

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// runner is a started implementation: run executes n copies of the task and
// returns after all of them returned; close stops every goroutine the runner
// started and waits for them to exit. waits, set only for workgang, reads
// the worker set's counters of how workers obtained their copies.
type runner struct {
	run   func()
	close func()
	waits func() waitStats
}

// waitStats counts, for the copies run on worker goroutines, how the worker
// obtained each: ready (a copy was waiting), spun (it arrived while the
// worker spun) or parked (the worker had parked and was woken).
type waitStats struct {
	WorkerCopies uint64 `json:"worker_copies"`
	Ready        uint64 `json:"ready"`
	Spun         uint64 `json:"spun"`
	Parked       uint64 `json:"parked"`
}

// sub returns s - o, field by field.
func (s waitStats) sub(o waitStats) waitStats {
	return waitStats{s.WorkerCopies - o.WorkerCopies, s.Ready - o.Ready, s.Spun - o.Spun, s.Parked - o.Parked}
}

// add returns s + o, field by field.
func (s waitStats) add(o waitStats) waitStats {
	return waitStats{s.WorkerCopies + o.WorkerCopies, s.Ready + o.Ready, s.Spun + o.Spun, s.Parked + o.Parked}
}

// impl is one way to run n copies of a task and wait for them all.
type impl struct {
	name string // row name in tables, JSON and benchmark names
	desc string // one line for the legend
	// start returns a runner of n copies of work; size is full parallelism
	// (-max), the size of a workgang set (at least n).
	start func(size, n int, work func(int)) runner
}

// Implementation names, as they appear in tables and JSON.
const (
	nameWorkers   = "workers"
	nameCaller    = "workers+caller"
	nameWaitGroup = "waitgroup"
	nameErrgroup  = "errgroup"
	nameChanPool  = "chanpool"
	nameDirect    = "direct"
	namePingPong  = "pingpong"
)

// impls lists workgang's modes first, then the peers, in table order.
var impls = []impl{
	{nameWorkers, "workgang RunN, every copy on a worker goroutine", startWorkers},
	{nameCaller, "workgang RunN of tasks.CallerRuns(task): the caller runs copies too (n=1: inline)", startCaller},
	{nameWaitGroup, "go statement per copy + sync.WaitGroup, per run", startWaitGroup},
	{nameErrgroup, "errgroup.Group per run, Go per copy, Wait", startErrgroup},
	{nameChanPool, "n persistent goroutines; copy ids sent on a channel, completions received on another", startChanPool},
	{nameDirect, "the n copies called one after another on the caller (the floor)", startDirect},
	{namePingPong, "two goroutines spinning on atomics (yielding every 256 polls); caller runs copies [0,n/2), partner the rest", startPingPong},
}

// findImpl returns the implementation called name; it panics if there is
// none (names are constants of this package).
func findImpl(name string) impl {
	for _, im := range impls {
		if im.name == name {
			return im
		}
	}
	panic(fmt.Sprintf("perf: no implementation %q", name))
}

// startWorkers runs copies on a fresh worker set of max(size, n) workers.
func startWorkers(size, n int, work func(int)) runner {
	return startSet(size, n, perfTask(work, false))
}

// startCaller is startWorkers with the task opted in to caller-runs.
func startCaller(size, n int, work func(int)) runner {
	return startSet(size, n, perfTask(work, true))
}

// setOptions are the options of every workgang set the harness creates; -pin
// sets them once, before any section runs (harness.runAll), and nothing
// changes them while sets exist.
var setOptions []workers.Option

// startSet runs t with RunN(t, n) on a new set; close closes the set.
func startSet(size, n int, t tasks.Task) runner {
	w := workers.New("perf", max(size, n), setOptions...)
	return runner{run: func() { w.RunN(t, n) }, close: w.Close, waits: setWaits(w)}
}

// startWaitGroup starts n goroutines per run and waits with a WaitGroup.
func startWaitGroup(_, n int, work func(int)) runner {
	var wg sync.WaitGroup
	run := func() {
		wg.Add(n)
		for i := range n {
			go func() {
				work(i)
				wg.Done()
			}()
		}
		wg.Wait()
	}
	return runner{run: run, close: func() {}}
}

// startErrgroup uses a new errgroup.Group per run, as callers usually do.
func startErrgroup(_, n int, work func(int)) runner {
	run := func() {
		var g errgroup.Group
		for i := range n {
			g.Go(func() error {
				work(i)
				return nil
			})
		}
		_ = g.Wait() // the copies return no errors
	}
	return runner{run: run, close: func() {}}
}

// startDirect calls the copies on the caller.
func startDirect(_, n int, work func(int)) runner {
	run := func() {
		for i := range n {
			work(i)
		}
	}
	return runner{run: run, close: func() {}}
}

// chanPool is the pool every Go program writes by hand: n goroutines
// receiving copy ids from jobs and reporting on done.
type chanPool struct {
	n    int
	work func(int)
	jobs chan int
	done chan struct{}
	wg   sync.WaitGroup
}

// startChanPool starts the pool's n goroutines.
func startChanPool(_, n int, work func(int)) runner {
	p := &chanPool{n: n, work: work, jobs: make(chan int, n), done: make(chan struct{}, n)}
	p.wg.Add(n)
	for range n {
		go p.serve()
	}
	return runner{run: p.run, close: p.close}
}

// serve runs copies until jobs is closed.
func (p *chanPool) serve() {
	defer p.wg.Done()
	for i := range p.jobs {
		p.work(i)
		p.done <- struct{}{}
	}
}

// run hands out the n copy ids and waits for n completions.
func (p *chanPool) run() {
	for i := range p.n {
		p.jobs <- i
	}
	for range p.n {
		<-p.done
	}
}

// close stops the pool's goroutines and waits for them.
func (p *chanPool) close() {
	close(p.jobs)
	p.wg.Wait()
}

// pingPongYield is how many polls a ping-pong spinner makes between two
// runtime.Gosched calls, so that it cannot stall a GOMAXPROCS=1 process or
// a goroutine waiting for its P.
const pingPongYield = 256

// pingStop is the ping value that tells the partner to exit.
const pingStop = math.MaxUint64

// pingPong hands each run to one partner goroutine through an atomic word and
// waits on another: the cheapest hand-off two goroutines can do, one cache
// line each way. The caller runs copies [0, split), the partner [split, n).
type pingPong struct {
	// ping and seq, written by the caller, on line 1; pong, written by the
	// partner, on line 2 (layout_test.go checks the lines).
	_    pad.Line
	ping atomic.Uint64 // the run number handed to the partner, or pingStop
	seq  uint64        // the caller's run number; only the caller touches it
	_    [pad.CacheLine - 16]byte
	pong atomic.Uint64 // the last run number the partner finished
	_    [pad.CacheLine - 8]byte

	// Read-only after start: read by both goroutines, so kept off the
	// lines that are written per run.
	n, split int
	work     func(int)
	done     chan struct{} // closed when the partner exits
}

// startPingPong starts the partner goroutine.
func startPingPong(_, n int, work func(int)) runner {
	p := &pingPong{n: n, split: (n + 1) / 2, work: work, done: make(chan struct{})}
	go p.partner()
	return runner{run: p.run, close: p.close}
}

// run publishes the next run number, runs the caller's copies and spins until
// the partner reports the run finished. The partner's Store of pong follows
// its copies, so the caller's Load that sees it orders them before return.
func (p *pingPong) run() {
	p.seq++
	p.ping.Store(p.seq)
	for i := range p.split {
		p.work(i)
	}
	spinUntil(&p.pong, p.seq)
}

// partner runs its share of each run handed over in ping.
func (p *pingPong) partner() {
	defer close(p.done)
	var last uint64
	for {
		v := spinWhile(&p.ping, last)
		if v == pingStop {
			return
		}
		last = v
		for i := p.split; i < p.n; i++ {
			p.work(i)
		}
		p.pong.Store(v)
	}
}

// close stops the partner and waits for it to exit.
func (p *pingPong) close() {
	p.ping.Store(pingStop)
	<-p.done
}

// spinUntil polls w until it holds v, yielding now and then.
func spinUntil(w *atomic.Uint64, v uint64) {
	for i := 1; w.Load() != v; i++ {
		if i%pingPongYield == 0 {
			runtime.Gosched()
		}
	}
}

// spinWhile polls w while it holds v, yielding now and then, and returns the
// new value.
func spinWhile(w *atomic.Uint64, v uint64) uint64 {
	for i := 1; ; i++ {
		if x := w.Load(); x != v {
			return x
		}
		if i%pingPongYield == 0 {
			runtime.Gosched()
		}
	}
}
