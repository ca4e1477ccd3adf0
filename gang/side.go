package gang

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/semaphore"
	"github.com/workgang/workgang/tasks"
)

// The side slot holds one caller-runs run beside the run in the run word: a
// run submitted by another goroutine while the main run path is taken (by a
// run of the set's owner, or of another goroutine sharing the set). Its
// submitter, the holder, runs copies itself; workers that are idle claim the
// others. Nothing in the main run path waits for a side run: a worker serves
// a fresh run word before the side slot, and a worker busy with a side copy
// counts as not awake, so others take its copy of a main run (see Serve).
//
// The claim word is tag<<sideTagShift | n<<nBits | claimed: a claim is a CAS
// that adds one, and it succeeds only while claimed < n. A CAS that succeeds
// compares the whole word, so the claimer holds copy claimed of the run in the
// slot at that moment, whatever happened between its load and its CAS; the
// tag (the low bits of the run's generation) only makes the words of
// consecutive side runs differ. Everything else about the run (task, gen) is
// read after the claim, while the run cannot end: its left count includes the
// claimed copy. The zero word has n == 0: closed.
const (
	sideTagShift = 2 * nBits
	sideTagMask  = 1<<(64-sideTagShift) - 1
)

// side is the side slot. Its lines: the claim word, read by idle workers on
// every poll; the holder's fields, written once per side run; the end
// countdown and the holder's park tag; the holder's semaphore.
type side struct {
	// word is the claim word. The holder's Store of a new word publishes
	// gen, task and left, written before it, to every claimer (a claim's
	// CAS reads the value of that Store or of a later claim, and atomics
	// are sequentially consistent).
	word atomic.Uint64
	_    [cacheLine - 8]byte

	// owner is 1 while a holder has the slot. Taken by CAS from 0; the
	// holder's Store of 0 at the end publishes its clearing of task to the
	// next holder's CAS.
	owner atomic.Uint32
	// procs and procsAge cache GOMAXPROCS for the holder's end-wait budget,
	// as Dispatcher.procs does for the coordinator; written only by the
	// holder of the moment (consecutive holders are ordered by owner).
	procs    int32
	procsAge uint32
	// gen is the side run's full generation (holder-written, read by a
	// claimer after its claim); task its task, cleared after its end.
	gen   uint64
	task  tasks.Task
	coord spin.Spinner
	_     [cacheLine - 48]byte

	// left counts the copies of the side run not yet finished; the
	// decrement that reaches zero is the run's end (retireSide). parked
	// is the holder's park tag, as coordParked is the coordinator's: the
	// run's full generation while the holder sleeps for its end, else 0.
	left   atomic.Int64
	parked atomic.Uint64
	// holder is the holder's goroutine token while it has the slot (0
	// where goid.Get is slow), for SideWaiter.
	holder atomic.Uintptr
	_      [cacheLine - 24]byte

	// wake is where the holder blocks: only the finisher whose CAS took
	// parked from the run's generation signals it, once, so its count is
	// only ever 0, 1 or -1.
	wake semaphore.Semaphore
	_    [cacheLine - 24]byte

	// fails is the side run's panic record, taken by the holder.
	fails failures
}

// RunBeside runs n copies of the caller-runs plan p in the side slot: beside
// whatever run is in progress (Run) and without waiting for it. The calling
// goroutine runs copy 0, then claims the others one by one, as idle workers
// (awake ones, and parked ones it wakes if the run has more than one copy)
// do; it returns when all n have returned, with how many it ran and the first
// panic (as Run does; a Goexit of a caller copy proceeds once the other copies
// have run, unless one panicked: that panic is raised instead).
//
// The slot holds one run at a time: if another goroutine's side run has it,
// RunBeside returns ok == false at once, having run nothing. RunBeside may be
// called concurrently with Run, Stop and RunBeside; copy ids 0..n-1 are unique
// within the side run only, so its copies may run at the same time as copies
// of the main run with the same ids. It panics if the plan is the zero Plan,
// did not opt in to caller-runs, or n is outside [1, MaxSlots].
//
// Memory model: as for Run, the call is synchronized before every copy's
// start and every copy's return before RunBeside's return; when it returns,
// the Dispatcher keeps no reference to the task.
func (d *Dispatcher) RunBeside(p Plan, n int) (ok bool, callerCopies int, pe *PanicError) {
	if p.t == nil {
		panic("gang: RunBeside: zero Plan (make one with Prepare)")
	}
	if !p.callerRuns {
		panic(fmt.Sprintf("gang: RunBeside: task %q did not opt in to caller-runs", safeName(p.t)))
	}
	if n < 1 || n > MaxSlots {
		panic(fmt.Sprintf("gang: RunBeside: n = %d out of range [1, %d]", n, MaxSlots))
	}
	sd := &d.side
	if sd.owner.Load() != 0 || !sd.owner.CompareAndSwap(0, 1) {
		return false, 0, nil
	}
	if goid.Fast {
		sd.holder.Store(goid.Get())
	}
	sd.gen++
	gen := sd.gen
	sd.task = p.t
	sd.left.Store(int64(n))
	// Publish with copy 0 already claimed: the holder runs it at once.
	sd.word.Store((gen&sideTagMask)<<sideTagShift | uint64(n)<<nBits | 1)
	if n > 1 {
		d.wakeHelper()
	}
	callerCopies = d.sideOnCaller(p.t, gen)
	return true, callerCopies, d.endSide(gen)
}

// sideOnCaller runs copy 0 of side run gen and every copy it then claims. If
// a copy calls runtime.Goexit, the run must still end before the holder
// unwinds (workers help only when idle, so the copies no one claimed are the
// holder's): the deferred call runs them, ends the run, re-raises another
// copy's panic if there was one, and otherwise lets the Goexit proceed.
func (d *Dispatcher) sideOnCaller(t tasks.Task, gen uint64) (ran int) {
	normal := false
	defer func() {
		if !normal {
			d.drainSide(t, gen)
			if p := d.endSide(gen); p != nil && !p.Goexit {
				panic(p)
			}
		}
	}()
	for c, ok := 0, true; ok; c, ok = d.claimSide() {
		d.executeSide(t, c, gen, true)
		ran++
	}
	normal = true
	return ran
}

// drainSide runs, on the holder, every copy of its side run still unclaimed,
// going on past a copy's Goexit (which then proceeds).
func (d *Dispatcher) drainSide(t tasks.Task, gen uint64) {
	returned := false
	defer func() {
		if !returned {
			d.drainSide(t, gen)
		}
	}()
	for c, ok := d.claimSide(); ok; c, ok = d.claimSide() {
		d.executeSide(t, c, gen, true)
	}
	returned = true
}

// endSide waits until every copy of side run gen has returned, then empties
// and frees the slot and returns the run's first panic.
func (d *Dispatcher) endSide(gen uint64) *PanicError {
	sd := &d.side
	d.waitSide(gen)
	sd.task = nil
	pe := sd.fails.take()
	if goid.Fast {
		sd.holder.Store(0)
	}
	sd.owner.Store(0) // after the clearing: the next holder's CAS sees it
	return pe
}

// SideWaiter returns the goroutine token (package internal/goid) of a side
// run's holder that is asleep waiting for the copies workers took (it spun
// for its budget first), or 0. Package workers's cycle check reads it, as it
// reads CoordinatorParked: such a holder waits for the set's workers. Where
// goroutine identity is slow to get (goid.Fast is false) it is always 0.
func (d *Dispatcher) SideWaiter() uintptr {
	if d.side.parked.Load() == 0 {
		return 0
	}
	return d.side.holder.Load()
}

// claimSide claims the next unclaimed copy of the run in the side slot, if
// any (see the claim word above).
func (d *Dispatcher) claimSide() (c int, ok bool) {
	sd := &d.side
	for {
		w := sd.word.Load()
		if w&nMask >= w>>nBits&nMask {
			return 0, false
		}
		if sd.word.CompareAndSwap(w, w+1) {
			return int(w & nMask), true
		}
	}
}

// sideOpen reports whether the side slot has a copy no one claimed: the poll
// of an idle worker, one load of a line that changes only with side runs.
func (d *Dispatcher) sideOpen() bool {
	w := d.side.word.Load()
	return w&nMask < w>>nBits&nMask
}

// serveSide is worker s's service of the side slot: it claims copies and runs
// them while any is left and no new run word has come, waking one more parked
// worker each time it leaves copies unclaimed. The slot may change hands between two of its claims; each
// claim reads the task and generation of the run it claimed.
func (d *Dispatcher) serveSide(s *slot) {
	c, ok := d.claimSide()
	if !ok {
		return
	}
	// While the worker runs side copies, helpers of a main run that needs
	// it take its copy there (Serve's surplus rule takes copies of workers
	// that are not awake); the deferred store also runs on a copy's Goexit,
	// so that the replacement goroutine starts awake.
	s.state.Store(aside)
	defer s.state.Store(awake)
	for ; ok; c, ok = d.claimSide() {
		sd := &d.side
		t, gen := sd.task, sd.gen // stable while the claimed copy runs
		if d.sideOpen() {
			d.wakeHelper()
		}
		s.copies.Add(1)
		s.side.Add(1)
		d.executeSide(t, c, gen, false)
		if d.fresh(s) {
			// A new run word comes first: a stream of busy runs must not
			// keep from a main run a worker it needs. The holder claims
			// what is left.
			return
		}
	}
}

// executeSide runs copy c of side run gen, captures its failure and retires
// it.
func (d *Dispatcher) executeSide(t tasks.Task, c int, gen uint64, onCaller bool) {
	defer d.retireSide(gen)
	runCopy(t, c, onCaller, &d.side.fails)
}

// retireSide counts a copy of side run gen as finished; the decrement that
// reaches zero wakes the holder if it sleeps for this run. As in finish, the
// CAS from gen makes the permit this run's: a finisher slow past the holder's
// return finds another generation or 0 there and signals nothing. gen was
// read before the decrement: after it, the slot may hold another run.
func (d *Dispatcher) retireSide(gen uint64) {
	sd := &d.side
	if sd.left.Add(-1) != 0 {
		return
	}
	if sd.parked.Load() == gen && sd.parked.CompareAndSwap(gen, 0) {
		sd.wake.Signal(1)
	}
}

// waitSide waits until every copy of side run gen has returned: it spins for
// the set's end budget (capped for the holder and one helper), then parks.
func (d *Dispatcher) waitSide(gen uint64) {
	sd := &d.side
	if sd.left.Load() == 0 {
		return
	}
	if sd.procsAge%procsEvery == 0 {
		sd.procs = int32(runtime.GOMAXPROCS(0))
		d.noteProcs(sd.procs)
	}
	sd.procsAge++
	if budget := spin.CapFor(time.Duration(d.endSpin.Load()), 2, int(sd.procs)); budget > 0 {
		if spin.Until(budget, &sd.coord, func() bool { return sd.left.Load() == 0 }) {
			return
		}
	}
	// Commit, then re-check: the Dekker pair of retireSide (decrement, then
	// load parked). One of the two sees the other's write.
	sd.parked.Store(gen)
	if sd.left.Load() == 0 {
		if !sd.parked.CompareAndSwap(gen, 0) {
			sd.wake.Wait() // the finisher got there first and owes the permit
		}
		return
	}
	// Only run gen's finisher signals, once; its Signal is synchronized
	// before this Wait's return, after every copy's decrement.
	sd.wake.Wait()
}

// wakeHelper wakes one parked worker that the run in the run word does not
// use (any worker once that run has ended), the highest-numbered first (low
// ids are the ones main runs need), for the side run. It wakes no one once
// Stop was called. Which workers are free is a heuristic read of two words:
// a worker woken for nothing parks again. The CAS from parked
// makes this waker the one that owes the worker its permit, as in
// wakeIfParked, so a worker's semaphore still never holds more than one.
func (d *Dispatcher) wakeHelper() {
	r := d.run.Load()
	if r&stopBit != 0 {
		return
	}
	m := int(r & nMask)
	if r&callerBit != 0 {
		m--
	}
	if d.done.Load() == d.runGen.Load() {
		m = 0
	}
	for i := len(d.slots) - 1; i >= m; i-- {
		s := &d.slots[i]
		if s.state.Load() == parked && s.state.CompareAndSwap(parked, waking) {
			s.wake.Signal(1)
			d.lure() // the waker runs on: keep the helper out of its runnext
			return
		}
	}
}
