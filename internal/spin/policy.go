package spin

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Policy is the wait policy of one dispatcher (package gang), its one seam
// with the protocol: gang calls it where a goroutine waits (Idle, End), where
// a park ended (Woken), and where one goroutine woke others (Woke, Ended),
// and nowhere else. Every method only spins, yields or readies the decoy:
// none touches the protocol's words. Make one with NewPolicy; it must not be
// copied.
type Policy struct {
	budget atomic.Int64 // the set's spin budget in ns (SetBudget)
	// yielded is the generation of the run whose coordinator yielded in End
	// (Yield): that run's last copy yields back in Ended. A hint: a stale
	// read only skips, or adds, one yield.
	yielded atomic.Uint64
	decoy   decoy // Lure
}

// NewPolicy returns a dispatcher's policy with the Default budget.
func NewPolicy() *Policy {
	p := &Policy{decoy: decoy{ch: make(chan struct{}), stop: make(chan struct{})}}
	p.SetBudget(Default)
	return p
}

// SetBudget sets how long an idle worker that recent runs needed, and the
// coordinator in its end wait, spin before parking (d >= 0).
func (p *Policy) SetBudget(d time.Duration) { p.budget.Store(int64(d)) }

// Waiter is one idle worker's wait state; the zero value is ready. It belongs
// to the worker's goroutine (a replacement receives it with the go statement
// that starts it).
type Waiter struct {
	misses   int16 // runs in a row that did not need the worker
	boost    int16 // how many times Learn doubled the budget
	parkedAt int64 // ns since start when the last spin gave up; 0 after a wake
}

// Learn bounds: 2^maxBoost times the set's budget, never past maxLearned.
const (
	maxBoost   = 4
	maxLearned = time.Millisecond
)

// Idle spins until done (a new run word) as long as the policy allows an
// idle worker, and reports whether done returned true; the worker parks if
// not. needed tells whether the run the worker saw last needed it: after one
// that did not, it spins an eighth of the budget, after two not at all (a
// surplus worker parks and costs nothing: this guards sets much larger than
// their runs). Otherwise the budget is the set's, doubled by Learn (hint
// Learn), cut by Allow.
func (p *Policy) Idle(w *Waiter, needed bool, done func() bool) bool {
	switch {
	case needed:
		w.misses = 0
	case w.misses < 2:
		w.misses++
	}
	budget := time.Duration(p.budget.Load())
	switch {
	case w.misses == 1:
		budget /= 8
	case w.misses > 1:
		budget = 0
	case On(Learn):
		budget <<= w.boost
	}
	allowed := Allow(budget)
	if Until(allowed, done) {
		return true
	}
	w.parkedAt = 0 // learn only from a park after a spin (Woken)
	if allowed > 0 {
		w.parkedAt = int64(time.Since(start)) // the slow path: about to block
	}
	return false
}

// Woken records, after a park that a waker ended, how long worker w slept
// (hint Learn): within 4 budgets of parking its budget doubles; after 32 or
// more it halves.
func (p *Policy) Woken(w *Waiter) {
	at := w.parkedAt
	w.parkedAt = 0
	if !On(Learn) || at == 0 || w.misses != 0 {
		return
	}
	budget := time.Duration(p.budget.Load()) << w.boost
	slept := time.Duration(int64(time.Since(start)) - at)
	switch {
	case budget <= 0:
	case slept < 4*budget && w.boost < maxBoost && 2*budget <= maxLearned:
		w.boost++
	case slept >= 32*budget && w.boost > 0:
		w.boost--
	}
}

// endWait is how long the coordinator of a plain run watches pending before
// it yields (hint Yield): about two cache-line transfers between processors
// of a VM, the time an awake, running worker takes to claim a copy and end
// one; a worker that takes longer is likely queued behind the coordinator
// (gate: empty-full, grain-2us).
const endWait = time.Microsecond

// End spins until done (the end of run gen) as long as the policy allows the
// coordinator, and reports whether done returned true; the coordinator parks
// if not. goroutines is the run's workers and coordinator for a plain run (0
// for a caller-runs one, whose caller claimed every copy it could). When they
// outnumber the processors, a coordinator that would spin yields once if
// pending (a copy is still unclaimed, and none has ended) holds for endWait
// (hint Yield): the worker that would claim that copy may be queued on its
// processor. Once a copy ended, its worker takes the others. One that will
// not spin (a loaded machine) parks at once anyway.
func (p *Policy) End(gen uint64, goroutines int, done, pending func() bool) bool {
	budget := Allow(time.Duration(p.budget.Load()))
	if budget > 0 && On(Yield) && goroutines > Procs() {
		for t0 := time.Now(); pending(); {
			if done() {
				return true
			}
			if time.Since(t0) >= endWait {
				p.yielded.Store(gen)
				runtime.Gosched()
				break
			}
		}
	}
	return Until(budget, done)
}

// Ended is called by the copy that ended run gen, after it woke the
// coordinator if that parked: if the coordinator yielded in End, it may be
// queued on this processor, so the copy yields back (hint Yield).
func (p *Policy) Ended(gen uint64) {
	if p.yielded.Load() == gen {
		runtime.Gosched()
	}
}

// The decoy (hint Lure). Go's scheduler puts a goroutine readied by another
// one (a semaphore's Signal) in the readier's runnext slot: it runs on the
// readier's processor when the readier blocks or yields. An idle processor
// takes a goroutine from another processor's ordinary run queue at once, but
// from its runnext slot only after a pause. A waker that runs on after its
// wake-ups (a caller-runs caller, a worker waking its children) so keeps the
// woken worker off every processor, and a run shorter than that pause ends
// on the waker alone. The decoy is a goroutine blocked on an unbuffered
// channel: readied right after the wake-ups, it takes runnext and pushes the
// worker readied last into the run queue.
type decoy struct {
	ch      chan struct{} // unbuffered: a send succeeds only while Serve waits
	stop    chan struct{} // closed once, by the first Stop
	stopped atomic.Bool   // the CAS's winner closes stop
	lured   atomic.Uint64 // lures received; written by Serve only
}

// Serve serves the policy's decoy until Stop: optional, one goroutine at
// most; without it Woke does nothing.
func (p *Policy) Serve() {
	for {
		select {
		case <-p.decoy.ch:
			p.decoy.lured.Add(1)
		case <-p.decoy.stop:
			return
		}
	}
}

// Stop makes Serve return, now or when it is called; later calls do nothing.
func (p *Policy) Stop() {
	if p.decoy.stopped.CompareAndSwap(false, true) {
		close(p.decoy.stop)
	}
}

// Lured reports how many times Woke readied the decoy (tests).
func (p *Policy) Lured() uint64 { return p.decoy.lured.Load() }

// Woke is called by a waker that woke at least one parked worker and runs
// on: it readies the decoy if it waits (hint Lure, and more than one
// processor: with one, no other processor could take the worker; and not
// while other processes wait for the CPUs (hint Load): then no processor is
// idle to take it, and the decoy would only add a switch on a scarce CPU;
// the gate's contended2-forrange). A non-blocking send on an unbuffered
// channel with no receiver takes no lock.
func (p *Policy) Woke() {
	if !On(Lure) || Procs() <= 1 || crowded(view.word.Load()) {
		return
	}
	select {
	case p.decoy.ch <- struct{}{}:
	default:
	}
}
