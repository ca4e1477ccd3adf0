package gang

import (
	"fmt"
	"runtime"
	"time"

	"github.com/workgang/workgang/internal/peek"
)

// The dispatch protocol, all of it: README.md argues it, docs/model checks it.
// The wait policy (d.policy, internal/spin), asked only where a goroutine
// waits (next, waitEnd) or woke the coordinator (retire), only sets how long
// a waiter spins before it parks, or makes it yield.

// Run runs n copies of the planned task on goroutines blocked in Serve and
// returns after all of them returned; with caller-runs the calling goroutine
// runs copy n-1, then claims every copy no worker has started. It returns
// how many copies the caller ran and the first failure of any copy (nil if
// none; a panic takes precedence over a worker copy's runtime.Goexit). When
// a caller copy calls runtime.Goexit, Run re-raises another copy's panic
// rather than let the Goexit hide it; it panics for no other copy's failure.
// It panics if the plan is the zero Plan or n is out of range.
//
// Worker goroutines must serve slots 0..n-1 (0..n-2 with caller-runs), or
// the run cannot finish. Run must not be called concurrently with Run or
// Stop. Memory model: the call of Run is synchronized before every copy's
// start, and every copy's return before Run's return, by which time the
// Dispatcher keeps no reference to the task.
func (d *Dispatcher) Run(p Plan, n int) (callerCopies int, pe *PanicError) {
	if p.t == nil {
		panic("gang: Run: zero Plan (make one with Prepare)")
	}
	m := n // copies meant for workers
	if p.callerRuns {
		m--
	}
	if n < 1 || m > len(d.slots) {
		panic(fmt.Sprintf("gang: Run: n = %d out of range for %d workers (caller-runs %v)", n, len(d.slots), p.callerRuns))
	}
	d.gen++ // starts at 1: 0 is the initial claim and seen value
	gen := d.gen
	d.task, d.name = p.t, p.Name()
	groups := (n + groupSize - 1) / groupSize
	for g := range groups {
		d.groups[g].left.Store(int64(min(groupSize, n-g*groupSize)))
	}
	if groups > 1 {
		d.groupsLeft.Store(int64(groups))
	}
	word := (gen&genMask)<<genShift | uint64(n)
	if p.callerRuns {
		word |= callerBit
	}
	// Publish: every write above is visible to whoever loads this word.
	d.runGen.Store(gen)
	d.run.Store(word)
	late := p.late && p.callerRuns
	if late {
		d.armLate(word&^(callerBit|nMask) | uint64(m))
	} else {
		d.wakeChildren(-1, m) // the coordinator is the tree's root
	}
	if p.callerRuns {
		callerCopies = d.runOnCaller(n, m, gen)
	}
	if late {
		d.disarmLate()
	}
	d.waitEnd(gen, n, m)
	// Every copy has returned and no goroutine reads task before a claim of
	// a later run: nothing of the task stays reachable from d.
	d.task, d.name = nil, ""
	return callerCopies, d.fails.Take()
}

// runOnCaller runs the caller's copy n-1, which nobody else claims (workers
// claim only copies below m = n-1), then claims every worker copy not yet
// started, highest first (low ids are likeliest awake).
func (d *Dispatcher) runOnCaller(n, m int, gen uint64) (ran int) {
	// A caller copy's Goexit unwinds through here, its accounting done
	// (execute's defer): wait for the worker copies and keep their panic.
	normal := false
	defer func() {
		if !normal {
			d.Wake() // a late run's workers must run the copies the caller left
			if d.timer != nil {
				d.timer.Stop()
			}
			d.waitEnd(gen, n, m)
			d.task, d.name = nil, ""
			if p := d.fails.Take(); p != nil && !p.Goexit {
				panic(p)
			}
		}
	}()
	d.execute(n-1, n, gen, true)
	ran = 1
	for c := m - 1; c >= 0; c-- {
		if d.claim(c, gen) {
			d.execute(c, n, gen, true)
			ran++
		}
	}
	normal = true
	return ran
}

// claim takes copy c of run gen and reports whether it did: one CAS from a
// value older than gen succeeds. A claim from a stale run word k fails: run k
// ended, so each of its copies was claimed in run k or later (claim >= k).
func (d *Dispatcher) claim(c int, gen uint64) bool {
	s := &d.slots[c]
	old := s.claim.Load() // a plain load first keeps a claimed line shared
	return old < gen && s.claim.CompareAndSwap(old, gen)
}

// Wake wakes the workers the late run in progress (Plan.Late) left parked, if
// nobody has yet; else it does nothing. Any goroutine may call it at any time
// (the caller's copy, the run's timer). It changes no claim.
//
// The CAS to 0 elects one waker per run. A Wake that loaded run k's word and
// is delayed past its end fails the CAS (0, or a later run's word), or won it
// just before the disarm: a waker acting on an old run word, which the
// protocol allows. The run word precedes the late word (wake's pairing).
func (d *Dispatcher) Wake() {
	w := d.late.Load()
	if w != 0 && d.late.CompareAndSwap(w, 0) {
		d.wakeChildren(-1, int(w&nMask))
	}
}

// armLate marks the run just published late (word: its generation and m)
// and sets the timer that Wakes lateBound from now. Coordinator only. Every
// way out of Run stops the timer; a callback that fired already may still
// run Wake for microseconds after Run, Stop or Close return: it finds 0 or a
// later run's word, and wakes only parked workers (an exited one is awake),
// and its goroutine ends at once (goleak retries before it reports).
func (d *Dispatcher) armLate(word uint64) {
	d.late.Store(word)
	if d.timer == nil {
		d.timer = time.AfterFunc(d.lateBound, d.Wake) // made once per dispatcher
		return
	}
	d.timer.Reset(d.lateBound)
}

// disarmLate ends the late wake-up once the caller claimed every copy left;
// a timer that fired meanwhile finds 0 or the next late run's word (timing).
func (d *Dispatcher) disarmLate() {
	d.late.Store(0)
	d.timer.Stop() // armLate made it
}

// snapshot returns the run word and its full generation, consistently. The
// coordinator stores runGen, then run; a reader loads run, then runGen. If
// their low bits agree, runGen is r's (a newer one with the same low bits
// needs 2^genBits runs between the loads); else r is stale: reread.
func (d *Dispatcher) snapshot() (r, gen uint64) {
	for {
		r = d.run.Load()
		gen = d.runGen.Load()
		if gen&genMask == genOf(r) {
			return r, gen
		}
		runtime.Gosched() // the coordinator is between its two stores
	}
}

// wakeChildren wakes node p's children in the wake tree (2p+2, 2p+3; the
// coordinator is p = -1) if the run's m worker copies need them. Worker c < m
// has a needed parent below it, or the coordinator: every needed worker is
// woken, O(log k) wake-ups of k workers on the critical path.
func (d *Dispatcher) wakeChildren(p, m int) {
	for c := 2*p + 2; c < min(2*p+4, m); c++ {
		d.wake(c)
	}
}

// wake wakes worker i if it committed to park, and reports whether it did.
// The CAS makes one waker owe the park its permit. The worker stays waking
// until it runs, so awake goroutines may take its copy meanwhile. No wake-up
// is lost: the worker stores parked, then loads the run word; a waker stores
// the run word, then loads state. Sequentially consistent, one sees the
// other's store: the worker sees the run, or the waker signals.
func (d *Dispatcher) wake(i int) bool {
	s := &d.slots[i]
	if s.state.Load() == parked && s.state.CompareAndSwap(parked, waking) {
		s.sem.Signal(1)
		return true
	}
	return false
}

// Serve runs worker i's copies of every run until Stop. If a copy calls
// runtime.Goexit, it is accounted for (and reported to Run) before the
// goroutine exits; its owner should then call Serve(i) on a new goroutine,
// which resumes where the old one stopped; no two goroutines may serve i at once.
func (d *Dispatcher) Serve(i int) {
	s := &d.slots[i]
	needed := true // whether the last run needed this worker (the wait policy asks)
	for {
		r, gen := d.next(s, i, needed)
		s.seen = gen
		if r&stopBit != 0 {
			return
		}
		n := int(r & nMask)
		m := n
		if r&callerBit != 0 {
			m--
		}
		d.wakeChildren(i, m) // first: the wake-ups go out in parallel with the copies
		if i < m {
			needed = true // even if another took the copy
			d.serveCopy(s, i, n, gen)
			// Then a bounded look at the next copies not yet started (their
			// workers' processors may be busy), not every slot of a large run.
			for k := 1; k <= stealAhead && k < m; k++ {
				d.serveCopy(s, (i+k)%m, n, gen)
			}
			continue
		}
		// A surplus worker takes copies of parked or waking workers.
		needed = false
		for c := range m {
			if d.slots[c].state.Load() != awake && d.serveCopy(s, c, n, gen) {
				needed = true
			}
		}
	}
}

// serveCopy claims copy c of run gen for worker s and, if it did, runs it.
func (d *Dispatcher) serveCopy(s *slot, c, n int, gen uint64) bool {
	if !d.claim(c, gen) {
		return false
	}
	s.copies.Add(1)
	d.execute(c, n, gen, false)
	return true
}

// next waits for a run word newer than worker s's seen and returns it with
// its full generation: it spins as the wait policy allows (needed: the last
// run needed worker i), then parks, again if a stale waker woke it.
func (d *Dispatcher) next(s *slot, i int, needed bool) (r, gen uint64) {
	ready := d.fresh(s)
	if d.policy.Idle(&s.wait, i, needed, func() bool { return d.fresh(s) }) {
		if ready {
			s.ready.Add(1)
		} else {
			s.spun.Add(1)
		}
		return d.snapshot()
	}
	for {
		d.park(s)
		if d.fresh(s) {
			return d.snapshot()
		}
	}
}

// fresh reports whether the run word is newer than worker s's seen: an idle
// worker's poll of a line that stays shared until the next run.
func (d *Dispatcher) fresh(s *slot) bool {
	return genOf(d.run.Load()) != s.seen&genMask
}

// park commits worker s to block, re-checks the run word, and blocks on its
// semaphore until a waker signals it (see wake for the pairing).
func (d *Dispatcher) park(s *slot) {
	s.parks.Add(1)
	s.state.Store(parked)
	if d.fresh(s) {
		// A run arrived before the commit. Withdraw; a waker that got there
		// first owes a permit: take it, leaving the semaphore empty.
		if !s.state.CompareAndSwap(parked, awake) {
			s.sem.Wait()
			s.state.Store(awake)
		}
		return
	}
	// The waker stored the run word before its CAS and Signal, which is
	// synchronized before this Wait's return: the run is visible.
	s.sem.Wait()
	s.wakeups.Add(1)
	s.state.Store(awake)
}

// execute runs copy c of run gen (n copies), records its failure, if any,
// and retires it (deferred first, so last, whatever the copy does).
func (d *Dispatcher) execute(c, n int, gen uint64, onCaller bool) {
	defer d.retire(c, n, gen)
	runCopy(d.task, d.name, c, onCaller, &d.fails)
}

// retire counts copy c of an n-copy run as finished. The decrements are
// RMWs: the one reaching zero follows every other decrement of its counter
// (and that copy's writes); groupsLeft likewise. Then the next run may start,
// so the copy touches no run state after (finish: the gen-tagged park word).
func (d *Dispatcher) retire(c, n int, gen uint64) {
	if d.groups[c/groupSize].left.Add(-1) != 0 {
		return
	}
	if n > groupSize && d.groupsLeft.Add(-1) != 0 {
		return
	}
	if d.finish(gen) {
		d.policy.Ended() // after the copy's last protocol step
	}
}

func init() {
	// For package workers's cycle check (internal/peek says why).
	peek.CoordinatorParked = func(d any) bool { return d.(*Dispatcher).coordParked.Load() != 0 }
}

// finish wakes the coordinator if it sleeps for the end of run gen, which the
// caller's decrement just made, and reports whether it did. The CAS from gen
// makes the permit this run's: a finisher delayed past the next park signals nothing.
func (d *Dispatcher) finish(gen uint64) bool {
	if d.coordParked.Load() == gen && d.coordParked.CompareAndSwap(gen, 0) {
		d.coordWake.Signal(1)
		return true
	}
	return false
}

// waitEnd waits until the last copy of run gen (n copies, m meant for
// workers) finished: it spins as the wait policy allows, then parks.
func (d *Dispatcher) waitEnd(gen uint64, n, m int) {
	// The run's last counter: the load that sees zero reads from the last
	// decrement, after every copy's writes (retire); polling it saves a flag's transfer.
	last := &d.groupsLeft
	if n <= groupSize {
		last = &d.groups[0].left
	}
	ended := func() bool { return last.Load() == 0 }
	if ended() {
		return
	}
	// Copies not returned yet: the countdown, or all m with several groups.
	running := func() int { return m }
	if n <= groupSize {
		running = func() int { return int(last.Load()) }
	}
	if d.policy.End(running, ended) {
		return
	}
	// Commit, then re-check: the Dekker pair of retire (the decrement to
	// zero, then finish's load of coordParked); one sees the other's write.
	d.coordParked.Store(gen)
	if ended() {
		if !d.coordParked.CompareAndSwap(gen, 0) {
			d.coordWake.Wait() // finish got there first and owes the permit
		}
		return
	}
	// Only run gen's finisher signals, once, after its decrement; the
	// Signal is synchronized before this Wait's return.
	d.coordWake.Wait()
}

// Stop makes every goroutine serving one of the first k slots return from
// Serve. It must not be called while a run is in progress.
func (d *Dispatcher) Stop(k int) {
	if k < 0 || k > len(d.slots) {
		panic(fmt.Sprintf("gang: Stop: k = %d out of range [0, %d]", k, len(d.slots)))
	}
	d.gen++
	d.runGen.Store(d.gen)
	d.run.Store((d.gen&genMask)<<genShift | stopBit)
	for i := range k {
		d.wake(i)
	}
}
