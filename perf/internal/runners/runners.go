// Package runners holds the ways the perf sections run n copies of a task
// and wait for them all: workgang's sets (a fresh set per measurement, or one
// long-lived set shared by a whole section), the peers a Go program would use
// instead (go+WaitGroup, errgroup, a channel-fed pool), serial calls on the
// caller, and the ping-pong bound. A section starts one, runs it many times
// and closes it; the names here are the rows of every table, JSON document
// and plot.
package runners

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

// Runner is a started implementation: Run executes n copies of the task and
// returns after all of them returned; Close stops every goroutine the runner
// started and waits for them to exit. Waits, set only for workgang, reads
// the worker set's counters of how workers obtained their copies.
type Runner struct {
	Run   func()
	Close func()
	Waits func() WaitStats
}

// WaitStats counts, for the copies run on worker goroutines, how the worker
// obtained each: ready (a copy was waiting), spun (it arrived while the
// worker spun) or parked (the worker had parked and was woken).
type WaitStats struct {
	WorkerCopies uint64 `json:"worker_copies"`
	Ready        uint64 `json:"ready"`
	Spun         uint64 `json:"spun"`
	Parked       uint64 `json:"parked"`
}

// Sub returns s - o, field by field.
func (s WaitStats) Sub(o WaitStats) WaitStats {
	return WaitStats{s.WorkerCopies - o.WorkerCopies, s.Ready - o.Ready, s.Spun - o.Spun, s.Parked - o.Parked}
}

// Add returns s + o, field by field.
func (s WaitStats) Add(o WaitStats) WaitStats {
	return WaitStats{s.WorkerCopies + o.WorkerCopies, s.Ready + o.Ready, s.Spun + o.Spun, s.Parked + o.Parked}
}

// Impl is one way to run n copies of a task and wait for them all, as the
// empty-task and grain sections use it: started once per measurement.
type Impl struct {
	Name string // row name in tables, JSON and benchmark names
	Desc string // one line for the legend
	// start returns a runner of n copies of work; size is full parallelism
	// (-max), the size of a workgang set (at least n).
	Start func(size, n int, work func(int)) Runner
}

// Implementation names, the same in every section, its tables, JSON and
// plots. Every name of one of workgang's ways of running starts with
// "workgang" (or "1set:workgang" on the long-lived set of the empty-task
// sections).
const (
	// NameWorkgang is RunN of a plain task: every copy on a worker. In the
	// pause and gc sections, where phases mix modes, it is the one set
	// running each phase's task as the phase asks.
	NameWorkgang  = "workgang"
	NameCaller    = "workgang+caller" // RunN of a tasks.CallerRuns task
	NameForRange  = "workgang ForRange"
	NameTeam      = "workgang RunTeam" // one run per solve, barriers between phases
	NameSerial    = "serial"           // the copies called one after another on the caller
	NameWaitGroup = "go+WaitGroup"
	NameErrgroup  = "errgroup"
	NameChanPool  = "chanpool"
	NamePingPong  = "pingpong"
)

// Impls lists workgang's modes on fresh sets first, then the Peers, serial
// and the ping-pong bound, in table order.
var Impls = []Impl{
	{NameWorkgang, "workgang RunN, every copy on a worker goroutine (a fresh set per measurement)", startWorkers},
	{NameCaller, "workgang RunN of tasks.CallerRuns(task): the caller runs copies too (n=1: inline)", startCaller},
	peerImpl(Peers[0]),
	peerImpl(Peers[1]),
	peerImpl(Peers[2]),
	{NameSerial, "the n copies called one after another on the caller (the floor)", func(_, n int, work func(int)) Runner {
		return Runner{Run: func() { Serial(n, work) }, Close: func() {}}
	}},
	{NamePingPong, "bound: two goroutines spinning on atomics (yielding every 256 polls), the cheapest hand-off; caller runs copies [0,n/2), partner the rest", startPingPong},
}

// Find returns the implementation called name; it panics if there is
// none (names are constants of this package).
func Find(name string) Impl {
	for _, im := range Impls {
		if im.Name == name {
			return im
		}
	}
	panic(fmt.Sprintf("perf: no implementation %q", name))
}

// startWorkers runs copies on a fresh worker set of max(size, n) workers.
func startWorkers(size, n int, work func(int)) Runner {
	return StartSet(size, n, Task(work, false))
}

// startCaller is startWorkers with the task opted in to caller-runs.
func startCaller(size, n int, work func(int)) Runner {
	return StartSet(size, n, Task(work, true))
}

// setOptions are the options of every workgang set the sections create; -pin
// sets them once, before any section runs (Pin), and nothing changes them
// while sets exist.
var setOptions []workers.Option

// Pin makes every set created from now on pin its workers
// (workers.WithAffinity()) if on, and leaves them unpinned otherwise. Call it
// only while no section runs.
func Pin(on bool) {
	setOptions = nil
	if on {
		setOptions = []workers.Option{workers.WithAffinity()}
	}
}

// Options returns the options of every set the sections create (see Pin).
func Options() []workers.Option { return setOptions }

// Empty is the empty task of the empty-task sections.
func Empty(int) {}

// ForRange is the one place the sections call Workers.ForRange: copies
// copies, the chunk size left to ForRange, the caller running copies if
// callerRuns (ForRange's default), the body only on workers otherwise.
// (When ForRange's options change, only this call changes.)
func ForRange(w *workers.Workers, n int, body func(worker, lo, hi int), copies int, callerRuns bool) {
	if callerRuns {
		w.ForRange(n, body, workers.WithCopies(copies))
		return
	}
	w.ForRange(n, body, workers.WithCopies(copies), workers.WithWorkersOnly())
}

// StartSet runs t with RunN(t, n) on a new set; Close closes the set.
func StartSet(size, n int, t tasks.Task) Runner {
	w := workers.New("perf", max(size, n), setOptions...)
	return Runner{Run: func() { w.RunN(t, n) }, Close: w.Close, Waits: SetWaits(w)}
}

// FanOut runs work(0), ..., work(n-1) and returns after every one returned.
type FanOut func(n int, work func(int))

// Peer is one of the ways a Go program runs copies without workgang. Every
// section that compares with peers runs these, and only these, so a peer is
// written once. Start returns the peer's FanOut for runs of up to size
// copies and the function that stops whatever Start started.
type Peer struct {
	Name, Desc string
	Start      func(size int) (run FanOut, stop func())
}

// Peers are the peers, in table order.
var Peers = []Peer{
	{NameWaitGroup, "a go statement per copy + sync.WaitGroup, per run", startWaitGroup},
	{NameErrgroup, "an errgroup.Group per run, Go per copy, Wait", startErrgroup},
	{NameChanPool, "persistent goroutines (one per copy of the largest run); copies sent on a channel, completions received on another", startChanPool},
}

// peerImpl returns p as an impl: a runner of n copies on a peer started for
// runs of n.
func peerImpl(p Peer) Impl {
	return Impl{p.Name, p.Desc, func(_, n int, work func(int)) Runner {
		run, stop := p.Start(n)
		return Runner{Run: func() { run(n, work) }, Close: stop}
	}}
}

// Serial calls the copies one after another on the caller.
func Serial(n int, work func(int)) {
	for i := range n {
		work(i)
	}
}

// startWaitGroup starts n goroutines per run and waits with a WaitGroup (one
// WaitGroup for all runs: it is reusable once Wait returned).
func startWaitGroup(int) (FanOut, func()) {
	var wg sync.WaitGroup
	run := func(n int, work func(int)) {
		wg.Add(n)
		for i := range n {
			go func() {
				work(i)
				wg.Done()
			}()
		}
		wg.Wait()
	}
	return run, func() {}
}

// startErrgroup uses a new errgroup.Group per run, as callers usually do.
func startErrgroup(int) (FanOut, func()) {
	run := func(n int, work func(int)) {
		var g errgroup.Group
		for i := range n {
			g.Go(func() error {
				work(i)
				return nil
			})
		}
		_ = g.Wait() // the copies return no errors
	}
	return run, func() {}
}

// poolJob is one copy of one run, sent to a pool goroutine.
type poolJob struct {
	work func(int)
	i    int
}

// chanPool is the pool every Go program writes by hand: size goroutines
// receiving copies from jobs and reporting on done.
type chanPool struct {
	jobs chan poolJob
	done chan struct{}
	wg   sync.WaitGroup
}

// startChanPool starts the pool's size goroutines.
func startChanPool(size int) (FanOut, func()) {
	p := &chanPool{jobs: make(chan poolJob, size), done: make(chan struct{}, size)}
	p.wg.Add(size)
	for range size {
		go p.serve()
	}
	return p.run, p.close
}

// serve runs copies until jobs is closed.
func (p *chanPool) serve() {
	defer p.wg.Done()
	for j := range p.jobs {
		j.work(j.i)
		p.done <- struct{}{}
	}
}

// run hands out the n copies and waits for n completions.
func (p *chanPool) run(n int, work func(int)) {
	for i := range n {
		p.jobs <- poolJob{work, i}
	}
	for range n {
		<-p.done
	}
}

// close stops the pool's goroutines and waits for them.
func (p *chanPool) close() {
	close(p.jobs)
	p.wg.Wait()
}

// FanOutRunner is a Peer as the examples' mark.Runner (the interface of a
// workgang set the gc collector runs on): RunN(t, n) runs t's copies with
// the peer's FanOut.
type FanOutRunner struct {
	Max int
	Run FanOut
}

// MaxWorkers returns the largest run the runner takes.
func (r FanOutRunner) MaxWorkers() int { return r.Max }

// RunN runs copies 0..n-1 of t and waits for them.
func (r FanOutRunner) RunN(t tasks.Task, n int) { r.Run(n, t.Work) }

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
func startPingPong(_, n int, work func(int)) Runner {
	p := &pingPong{n: n, split: (n + 1) / 2, work: work, done: make(chan struct{})}
	go p.partner()
	return Runner{Run: p.run, Close: p.close}
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
