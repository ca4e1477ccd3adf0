package gang

import (
	"fmt"
	"runtime"
	"time"

	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/tasks"
)

// Run runs n copies of the planned task and returns after all of them
// returned. Copies run on goroutines blocked in Serve; when the task opted in
// to caller-runs the calling goroutine runs copy n-1 itself and then claims
// every copy that no worker has started. Run returns how many copies the
// caller ran and the first panic of any copy (nil if none panicked; a panic
// takes precedence over a worker copy's runtime.Goexit). It does not panic
// for a task's panic, with one exception: when a caller copy calls
// runtime.Goexit, Run cannot return, and it re-raises a panic of another copy
// of the run instead of letting the Goexit hide it.
//
// Worker goroutines must serve slots 0..n-1 (0..n-2 with caller-runs), or
// the run cannot finish. Run must not be called concurrently with Run or
// Stop. It panics if the plan is the zero Plan or n is out of range.
//
// Memory model: the call of Run is synchronized before every copy's start;
// every copy's return is synchronized before Run's return. When Run returns,
// the Dispatcher keeps no reference to the task.
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
	d.task = p.t
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
	woke := m > 0 && d.wakeFor(0, m)
	if m > 1 && d.wakeFor(1, m) {
		woke = true
	}
	if woke {
		d.lure()
	}
	if p.callerRuns {
		callerCopies = d.runOnCaller(p.t, n, m, gen)
	}
	d.waitEnd(gen, m, !p.callerRuns)
	// Every copy has returned and no goroutine reads task before a claim of
	// a later run: nothing of the task stays reachable from d.
	d.task = nil
	return callerCopies, d.fails.take()
}

// runOnCaller runs the caller's copy n-1, which nobody else ever claims
// (workers claim only copies below m = n-1, in this run or, with a stale run
// word, in an older one), then claims every worker copy not yet started,
// highest first (the workers of low ids are the ones most likely awake).
func (d *Dispatcher) runOnCaller(t tasks.Task, n, m int, gen uint64) (ran int) {
	// If a caller copy calls runtime.Goexit, this goroutine unwinds through
	// here: the copy's own accounting already ran (in execute's defer), but
	// copies may still be running on workers, and the caller of Run (which
	// holds the dispatcher) must not release it before they end. A panic of
	// a worker copy must not be lost with the caller's Goexit: it is
	// re-raised, which turns the Goexit into that panic.
	normal := false
	defer func() {
		if !normal {
			d.waitEnd(gen, m, false)
			d.task = nil
			if p := d.fails.take(); p != nil && !p.Goexit {
				panic(p)
			}
		}
	}()
	d.execute(t, n-1, n, gen, true, false)
	ran = 1
	for c := m - 1; c >= 0; c-- {
		if d.claim(c, gen) {
			d.execute(t, c, n, gen, true, false)
			ran++
		}
	}
	normal = true
	return ran
}

// claim takes copy c of run gen for the calling goroutine and reports whether
// it did. Exactly one claim per (copy, run) succeeds: the CAS from a value
// older than gen to gen. A goroutine acting on a stale run word k < gen never
// succeeds: run k ended, so every copy of it was claimed in run k or later,
// and claim refuses a word that is not older than k.
func (d *Dispatcher) claim(c int, gen uint64) bool {
	s := &d.slots[c]
	old := s.claim.Load() // a plain load first keeps a claimed line shared
	return old < gen && s.claim.CompareAndSwap(old, gen)
}

// snapshot returns a consistent pair of the run word and its full
// generation. The coordinator stores runGen, then run; a reader loads run,
// then runGen. If the low bits agree, runGen belongs to r: a later run would
// have needed r to be consumed by every copy first, and runGen is stored
// before run, so the reader cannot see a newer runGen with the same low bits
// without 2^genBits runs passing between its two loads. If they disagree,
// the coordinator has moved on and r is stale: read again.
func (d *Dispatcher) snapshot() (r, gen uint64) {
	for {
		r = d.run.Load()
		gen = d.runGen.Load()
		if gen&genMask == genOf(r) {
			return r, gen
		}
		// The coordinator is between its two stores; let it finish if it
		// was preempted there.
		runtime.Gosched()
	}
}

// wakeIfParked wakes worker i if it committed to park. The CAS makes exactly
// one waker owe the worker a permit, so its semaphore never holds more than
// one and a park is never woken twice. The
// worker stays marked waking until it runs again, so that awake goroutines
// may take its copy meanwhile (a wake-up takes microseconds).
//
// Against park: the worker stores parked, then loads the run word; a waker
// stores the run word (before calling this), then loads state. With
// sequentially consistent atomics at least one of them sees the other's
// store: either the worker sees the new run and does not block, or the waker
// sees parked and signals its semaphore. No wake-up is lost.
func (d *Dispatcher) wakeIfParked(i int) {
	s := &d.slots[i]
	if s.state.Load() == parked && s.state.CompareAndSwap(parked, waking) {
		s.wake.Signal(1)
	}
}

// wakeFor wakes worker i for a run of m worker copies, where i < m, and
// reports whether it signalled a parked worker (then the caller lures the
// decoy once its wake-ups are done: decoy.go). A worker busy with a side copy
// (aside) reads the run word only when that copy returns, and only then would
// it wake its children in the tree (2i+2, 2i+3): the waker wakes them on its
// behalf, so that the rest of the run does not wait for the side copy. Waking
// a worker twice is harmless: only the CAS from parked signals.
func (d *Dispatcher) wakeFor(i, m int) (signalled bool) {
	s := &d.slots[i]
	switch s.state.Load() {
	case parked:
		if s.state.CompareAndSwap(parked, waking) { // as in wakeIfParked
			s.wake.Signal(1)
			return true
		}
		return false
	case aside:
	default:
		return false
	}
	if c := 2*i + 2; c < m {
		signalled = d.wakeFor(c, m)
		if c+1 < m && d.wakeFor(c+1, m) {
			signalled = true
		}
	}
	return signalled
}

// Stop makes every goroutine serving one of the first k slots return from
// Serve, and ServeDecoy return. It must not be called while a run is in
// progress.
func (d *Dispatcher) Stop(k int) {
	if k < 0 || k > len(d.slots) {
		panic(fmt.Sprintf("gang: Stop: k = %d out of range [0, %d]", k, len(d.slots)))
	}
	d.gen++
	d.runGen.Store(d.gen)
	d.run.Store((d.gen&genMask)<<genShift | stopBit)
	for i := range k {
		d.wakeIfParked(i)
	}
	d.stopDecoy()
}

// waitEnd waits until the last copy of run gen finished: it spins (for a
// budget capped when the run's m workers and this goroutine outnumber the
// processors, and in a plain run then only after a first yield), then
// parks.
func (d *Dispatcher) waitEnd(gen uint64, m int, plain bool) {
	if d.done.Load() == gen {
		return
	}
	if d.procsAge%procsEvery == 0 {
		d.procs = int32(runtime.GOMAXPROCS(0))
		d.noteProcs(d.procs)
	}
	d.procsAge++
	if plain && m+1 > int(d.procs) {
		// A plain run whose workers and this goroutine outnumber the
		// processors: a worker with a copy to run may be queued on this
		// one. A short run (empty copies an awake worker takes all of)
		// ends within a few polls; otherwise let the queued worker run
		// before spinning, and ask the finisher to yield back (retire). A
		// caller-runs caller has just run copies itself and claimed those
		// no worker took, so it spins at once.
		for range yieldAfterPolls {
			if d.done.Load() == gen {
				return
			}
		}
		d.coordYielded.Store(gen)
		runtime.Gosched()
		if d.done.Load() == gen {
			return
		}
	}
	if budget := spin.CapFor(time.Duration(d.endSpin.Load()), m+1, int(d.procs)); budget > 0 {
		if spin.Until(budget, &d.coord, func() bool { return d.done.Load() == gen }) {
			return
		}
	}
	// Commit, then re-check: the Dekker pair of finish (store done, then
	// load coordParked). One of the two sees the other's store.
	d.coordParked.Store(gen)
	if d.done.Load() == gen {
		if !d.coordParked.CompareAndSwap(gen, 0) {
			d.coordWake.Wait() // finish got there first and owes the permit
		}
		return
	}
	// Only run gen's finisher signals (its CAS from gen), and only once;
	// the Signal is synchronized before this Wait's return (package
	// semaphore's memory model), after finish's store of done.
	d.coordWake.Wait()
}

// CoordinatorParked reports whether the coordinator is asleep waiting for the
// end of a run (it spun for its budget first). Package workers's cycle check
// reads it: a coordinator that sleeps there waits for the run's copies.
func (d *Dispatcher) CoordinatorParked() bool { return d.coordParked.Load() != 0 }

// finish reports the end of run gen to the coordinator: store done, then
// wake the coordinator if it sleeps for this run. The CAS from gen makes the
// permit this run's: a finisher delayed past the coordinator's next park
// finds another generation there and signals nothing.
func (d *Dispatcher) finish(gen uint64) {
	d.done.Store(gen)
	if d.coordParked.Load() == gen && d.coordParked.CompareAndSwap(gen, 0) {
		d.coordWake.Signal(1)
	}
}
