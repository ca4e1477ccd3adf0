package gang

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/semaphore"
	"github.com/workgang/workgang/tasks"
)

// cacheLine is the padding unit (package internal/pad says why).
const cacheLine = uintptr(pad.CacheLine)

const (
	// The run word: gen<<genShift | stopBit | callerBit | n.
	nBits     = 20
	nMask     = 1<<nBits - 1
	callerBit = 1 << nBits
	stopBit   = 1 << (nBits + 1)
	genShift  = nBits + 2
	genBits   = 64 - genShift
	genMask   = 1<<genBits - 1

	// maxSlots is the module's one cap; a caller-runs run on every slot
	// (n = maxSlots+1) must fit the n field (the array below checks it).
	maxSlots = tasks.MaxCopies

	groupSize  = 8 // copies that share one countdown line at a run's end
	stealAhead = 2 // following copies a worker tries to claim after its own (see Serve)
)

var _ [nMask - (maxSlots + 1)]struct{} // see maxSlots

// genOf returns run word r's generation, its low genBits bits (see snapshot).
func genOf(r uint64) uint64 { return r >> genShift }

// Worker slot states.
const (
	awake  uint32 = 0 // running, spinning, or about to look at the run word
	parked uint32 = 1 // committed to block on its semaphore
	waking uint32 = 2 // a waker signalled it; the worker is not running yet
)

// slotWake is worker i's first line, read by wakers and helpers on every run
// and written only when the worker parks or is woken.
type slotWake struct {
	// state (awake, parked, waking) is the Dekker pair of park and wake;
	// helpers read it to find copies no running worker will take soon.
	state atomic.Uint32
	// sem is where the parked worker blocks; only the waker whose CAS won
	// owes it a permit (see wake), so its count stays in -1..1. Spin 0.
	sem semaphore.Semaphore
}

// slotRun is the second line: the claim word, and what only worker i's
// goroutine writes (a replacement receives it with its go statement).
type slotRun struct {
	claim atomic.Uint64 // the last run (full generation) that claimed copy i
	seen  uint64        // the generation of the last run word this worker acted on
	wait  spin.Waiter   // the wait policy's state for this worker
	// Counters: single writer (the worker), atomics so Stats may read them.
	copies, ready, spun, parks, wakeups atomic.Uint64
}

// slot is worker i's state, two lines.
type slot struct {
	slotWake
	_ [cacheLine - unsafe.Sizeof(slotWake{})]byte
	slotRun
	_ [cacheLine - unsafe.Sizeof(slotRun{})]byte
}

// group is one countdown line of a run's end accounting.
type group struct {
	left atomic.Int64
	_    [cacheLine - unsafe.Sizeof(atomic.Int64{})]byte
}

// runLine is written by the coordinator once per run and read by every
// worker that looks for one: one transfer brings the run word and the task.
type runLine struct {
	// run is stored only by the coordinator (per run, or Stop); the Store
	// publishes what it wrote before (task, name, runGen, the countdowns).
	run atomic.Uint64
	// runGen is run's full generation, stored just before it (snapshot):
	// claims compare full generations, which never wrap.
	runGen atomic.Uint64
	// task (and its name, when tracing): set before run's Store, read by a
	// copy after its claim, cleared after the end.
	task tasks.Task
	name string
}

// coordLine is the coordinator's, written on every run (workers: groupsLeft).
type coordLine struct {
	gen        uint64 // the current run's generation
	groupsLeft atomic.Int64
	// late is (gen&genMask)<<genShift | m while late run gen's m worker
	// copies wait for Wake (Plan.Late), else 0. The coordinator stores it
	// (armLate, disarmLate); Wake's CAS to 0 elects one waker per run.
	late atomic.Uint64
	// timer calls Wake lateBound after a late run starts, whatever the
	// caller's copy does. Made, reset and stopped by the coordinator only.
	timer     *time.Timer
	lateBound time.Duration // spin.LateBound; tests set it
}

// readLine is set by New and read by workers on every run.
type readLine struct {
	slots  []slot
	groups []group
	policy *spin.Policy // how long waiters spin: asked at wait and wake points only
}

// Dispatcher hands copies of one task at a time to the goroutines that call
// Serve. Create one with New. A Dispatcher must not be copied.
type Dispatcher struct {
	_ pad.Line
	runLine
	_ [cacheLine - unsafe.Sizeof(runLine{})]byte
	// coordParked, the end line, is 0 unless the coordinator sleeps, then the
	// generation of the run whose end it waits for (waitEnd, finish).
	coordParked atomic.Uint64
	_           [cacheLine - unsafe.Sizeof(atomic.Uint64{})]byte
	coordLine
	_ [cacheLine - unsafe.Sizeof(coordLine{})]byte
	readLine
	_ [cacheLine - unsafe.Sizeof(readLine{})]byte

	// coordWake is where the coordinator parks in its end wait (a line of
	// its own): only the finisher whose CAS took coordParked from the run's
	// generation signals it, once, so its count stays in -1..1.
	coordWake semaphore.Semaphore
	_         [cacheLine - unsafe.Sizeof(semaphore.Semaphore{})]byte

	fails Record // the current run's panics; written only when a copy panics
}

// New returns a Dispatcher for worker slots 0..workers-1, with the default
// spin budget. It panics if workers is outside [1, maxSlots].
func New(workers int) *Dispatcher {
	if workers < 1 || workers > maxSlots {
		panic(fmt.Sprintf("gang: New: workers = %d out of range [1, %d]", workers, maxSlots))
	}
	d := &Dispatcher{}
	d.slots = make([]slot, workers)
	d.groups = make([]group, (workers+groupSize)/groupSize) // n <= workers+1
	for i := range d.slots {
		d.slots[i].sem.SetSpin(0)
	}
	d.coordWake.SetSpin(0)
	d.policy = spin.NewPolicy()
	d.lateBound = spin.LateBound
	return d
}

// SetSpin sets how long an idle worker that recent runs needed polls for the
// next run, and the coordinator for the end of its run, before parking; 0
// parks at once. It may be called at any time; a waiter already spinning
// keeps its budget. The wait policy (internal/spin) cuts it to 0 with one
// processor or while other processes wait for the CPUs.
func (d *Dispatcher) SetSpin(s time.Duration) {
	if s < 0 {
		panic(fmt.Sprintf("gang: SetSpin: negative spin budget %v", s))
	}
	d.policy.SetBudget(s)
}

// WorkerStats are worker i's counters: copies it started, and how it learned
// of the runs it saw (Ready: the run word was already new when it looked;
// Spun: it changed while the worker spun; Parks: the worker committed to
// park; Wakeups: parks that ended with a waker's permit).
type WorkerStats struct {
	Copies, Ready, Spun, Parks, Wakeups uint64
}

// WorkerStats returns worker i's counters, each read atomically (no snapshot).
func (d *Dispatcher) WorkerStats(i int) WorkerStats {
	s := &d.slots[i]
	return WorkerStats{Copies: s.copies.Load(), Ready: s.ready.Load(), Spun: s.spun.Load(),
		Parks: s.parks.Load(), Wakeups: s.wakeups.Load()}
}
