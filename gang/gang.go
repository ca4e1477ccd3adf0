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

	// maxSlots is the most worker slots, the module's one cap. A caller-runs
	// run on every slot (n = maxSlots+1) must fit in the n field: the array
	// below fails to compile if it would not.
	maxSlots = tasks.MaxCopies

	groupSize  = 8 // copies that share one countdown line at a run's end
	stealAhead = 2 // following copies a worker tries to claim after its own (see Serve)
)

var _ [nMask - (maxSlots + 1)]struct{} // see maxSlots

// genOf returns the low genBits bits of the generation in run word r; the
// full 64-bit generation is in Dispatcher.runGen (see snapshot).
func genOf(r uint64) uint64 { return r >> genShift }

// Worker slot states.
const (
	awake  uint32 = 0 // running, spinning, or about to look at the run word
	parked uint32 = 1 // committed to block on its semaphore
	waking uint32 = 2 // a waker signalled it; the worker is not running yet
)

// slotWake is the first line of worker i's slot: what wakers and helpers read
// on every run and what changes only when the worker parks or is woken, so
// while the worker stays awake the line stays shared in their caches.
type slotWake struct {
	// state is awake, parked or waking: the Dekker pair of park and wake
	// (wakers act only on parked), and what helpers read to find copies
	// that no running worker will take soon.
	state atomic.Uint32
	// sem is where the worker blocks once parked: the waker that wins the
	// CAS to waking owes it exactly one permit (see wake), so its count is
	// only ever -1, 0 or 1. Spin budget 0: the worker has spun already.
	sem semaphore.Semaphore
}

// slotRun is the second line: the claim word (written by the claimer) and
// what only worker i's goroutine writes (or its replacement, which receives
// it with the go statement that starts it).
type slotRun struct {
	claim atomic.Uint64 // the last run (full generation) that claimed copy i: see claim
	seen  uint64        // the generation of the last run word this worker acted on
	wait  spin.Waiter   // the wait policy's state for this worker
	// Counters: single writer (the worker), atomics so Stats may read them.
	copies, ready, spun, parks, wakeups atomic.Uint64
}

// slot is worker i's state, two lines: see slotWake and slotRun.
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

// runLine is written by the coordinator once per run (and cleared after it)
// and read by every worker that looks for a run, so one transfer brings a
// worker the run word and the task.
type runLine struct {
	// run is the run word, stored only by the coordinator (once per run or
	// Stop): the Store publishes task, name, runGen and the countdowns,
	// written before it, to every goroutine that loads the word.
	run atomic.Uint64
	// runGen is the run word's full generation, stored just before it (see
	// snapshot): claims compare full generations, which never wrap.
	runGen atomic.Uint64
	// task (and its name, when tracing) is written before the run word's
	// Store and read by a copy only after its claim; cleared after the end.
	task tasks.Task
	name string
}

// endLine holds the coordinator's end-wait word, written when it parks and
// read by a run's last copy.
type endLine struct {
	// coordParked is 0 while the coordinator does not sleep, else the
	// generation of the run whose end it sleeps for (see waitEnd, finish).
	coordParked atomic.Uint64
}

// coordLine is the coordinator's own, written on every run; of workers only
// the last copies of runs of more than groupSize copies read it (groupsLeft).
type coordLine struct {
	gen        uint64 // the current run's generation
	groupsLeft atomic.Int64
	// A late run's wake-up (Plan.Late): the word says whom to wake, the
	// timer makes sure somebody does; touched only by late runs.
	//
	// late is (gen&genMask)<<genShift | m while run gen's m worker copies
	// wait for Wake, else 0. Stored by the coordinator (arm, disarm);
	// Wake's CAS to 0 makes exactly one waker of the run wake the roots.
	late atomic.Uint64
	// timer calls Wake lateBound after a late run starts, so its workers
	// are woken whatever the caller's copy does (blocks on another copy, or
	// never claims again). Made, reset and stopped by the coordinator only.
	timer     *time.Timer
	lateBound time.Duration // spin.LateBound; tests set it
}

// readLine is set by New and read by workers on every run, so it stays
// shared in their caches.
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
	endLine
	_ [cacheLine - unsafe.Sizeof(endLine{})]byte
	coordLine
	_ [cacheLine - unsafe.Sizeof(coordLine{})]byte
	readLine
	_ [cacheLine - unsafe.Sizeof(readLine{})]byte

	// coordWake is where the coordinator blocks in its end wait: only the
	// finisher whose CAS took coordParked from the run's generation signals
	// it (finish), once, so its count is only ever -1, 0 or 1. Written only
	// when the coordinator parks, so it has a line of its own.
	coordWake semaphore.Semaphore
	_         [cacheLine - unsafe.Sizeof(semaphore.Semaphore{})]byte

	fails Record // the current run's panics; written only when a copy panics
}

// New returns a Dispatcher for up to workers goroutines serving it (worker
// indices 0..workers-1), with the default spin budget. It panics if workers
// is outside [1, maxSlots].
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
// next run, and how long the coordinator polls for the end of the current
// one, before parking; 0 parks at once. It may be called at any time; a
// waiter already spinning keeps the budget it started with. The wait policy
// (internal/spin) cuts it to 0 with one processor or while other processes
// wait for the CPUs.
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

// WorkerStats returns worker i's counters. Each is read atomically; the set
// is not a consistent snapshot.
func (d *Dispatcher) WorkerStats(i int) WorkerStats {
	s := &d.slots[i]
	return WorkerStats{Copies: s.copies.Load(), Ready: s.ready.Load(), Spun: s.spun.Load(),
		Parks: s.parks.Load(), Wakeups: s.wakeups.Load()}
}
