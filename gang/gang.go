package gang

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/semaphore"
	"github.com/workgang/workgang/tasks"
)

// cacheLine is the padding unit (package internal/pad says why).
const cacheLine = pad.CacheLine

const (
	// The run word: gen<<genShift | stopBit | callerBit | n.
	nBits     = 20
	nMask     = 1<<nBits - 1
	callerBit = 1 << nBits
	stopBit   = 1 << (nBits + 1)
	genShift  = nBits + 2
	genBits   = 64 - genShift
	genMask   = 1<<genBits - 1

	// MaxSlots is the most worker slots a Dispatcher can have; New
	// panics above it.
	MaxSlots = nMask

	// groupSize is how many copies share one countdown line at the end of
	// a run.
	groupSize = 8

	// stealAhead is how many of the following copies a worker tries to
	// claim after its own (see Serve).
	stealAhead = 2

	// procsEvery is how many runs the coordinator's cached GOMAXPROCS
	// serves before it is read again.
	procsEvery = 1024

	// yieldAfterPolls is how many times the coordinator of a plain run at
	// full parallelism polls for the end before it yields its processor
	// (waitEnd): about as long as a worker takes to run two empty copies,
	// so that the empty-task round trip stays a spin. The benchmarks behind
	// it are the dispatch section (empty task, full) and the openmp
	// section's grain sweep of plain RunN in the perf harness.
	yieldAfterPolls = 64
)

// genOf returns the low genBits bits of the generation in run word r; the
// full 64-bit generation is in Dispatcher.runGen (see snapshot).
func genOf(r uint64) uint64 { return r >> genShift }

// Worker slot states.
const (
	awake  uint32 = 0 // running, spinning, or about to look at the run word
	parked uint32 = 1 // committed to block on its wake channel
	waking uint32 = 2 // a waker sent its token; the worker is not running yet
	aside  uint32 = 3 // running copies of the side run (side.go)
)

// slot is worker i's state, on two padded lines. The first holds what
// wakers and helpers read on every run (state) and change only when the
// worker parks or is woken, so while the worker stays awake the line stays
// shared in their caches and the coordinator's look at it costs no transfer.
// The second holds what changes on every run: the claim word (written by the
// claimer) and what only worker i's goroutine writes (or its replacement,
// which receives it with the go statement that starts it).
type slot struct {
	// state is awake, parked, waking or aside: the Dekker pair of park and
	// wakeIfParked (wakers act only on parked), and what helpers read to
	// find copies no one runs yet.
	state atomic.Uint32
	// wake is where the worker blocks once parked: the waker that wins the
	// CAS to waking owes it exactly one permit (see wakeIfParked), so its
	// count is only ever 0, 1 or -1. Its spin budget is 0: the worker has
	// spun already (next), and blocks here only when it parks.
	wake semaphore.Semaphore
	_    [cacheLine - 32]byte

	// claim is the (full) generation of the last run in which copy i was
	// claimed; see Dispatcher.claim.
	claim atomic.Uint64
	// misses counts the consecutive runs this worker saw without being
	// needed, boost how many times its full budget is doubled because it
	// was woken soon after it parked: its spin budget follows demand (see
	// idleBudget and learn).
	misses uint16
	boost  uint16
	spin   spin.Spinner
	// seen is the generation of the last run word this worker acted on.
	seen uint64
	// procs is GOMAXPROCS as this worker last read it (every procsEvery
	// runs), for the hand-back at the end of a plain run (see retire).
	procs    int32
	procsAge uint32
	// Counters: single writer (the worker), atomics so Stats may read them.
	copies, ready, spun, parks, wakeups, side atomic.Uint64
	_                                         [cacheLine - 80]byte // layout_test.go checks the size
}

// group is one countdown line of a run's end accounting.
type group struct {
	left atomic.Int64
	_    [cacheLine - 8]byte
}

// Dispatcher hands copies of one task at a time to the goroutines that call
// Serve. Create one with New. A Dispatcher must not be copied.
type Dispatcher struct {
	_ pad.Line

	// The run line: written by the coordinator once per run (and cleared
	// after it), read by every worker that looks for a run, so one transfer
	// brings a worker both the run word and the task.
	//
	// run is the run word. Only the coordinator writes it (one Store per
	// run, one per Stop); that Store publishes task, runGen and the
	// countdowns, which the coordinator wrote before it, to every goroutine
	// that loads the word (Go's atomics are sequentially consistent).
	run atomic.Uint64
	// runGen is the full 64-bit generation of the run word, stored just
	// before it (see snapshot): claims compare full generations, which
	// never wrap.
	runGen atomic.Uint64
	// task is written by the coordinator before the run word's Store and
	// read by a copy only after its claim; cleared after the run's end.
	task tasks.Task
	_    [cacheLine - 32]byte

	// The end line: written by a run's last copy, polled by the
	// coordinator, so that the end of a run does not invalidate the run
	// word in the idle workers' caches.
	//
	// done is the generation of the last run whose copies all finished: the
	// store by the last copy publishes every copy's writes to the
	// coordinator (see retire).
	done atomic.Uint64
	// coordParked/coordWake: the coordinator's park (see waitEnd and
	// finish): 0 while it does not sleep, else the generation of the run
	// whose end it sleeps for. The tag matters: a finisher of run k that is
	// slow between its store of done and its look at coordParked must not
	// wake the coordinator's park for run k+1.
	coordParked atomic.Uint64
	// coordYielded is the generation of the plain run whose coordinator
	// yielded its processor in its end wait (waitEnd): the worker that
	// finishes that run yields back (retire). Written by the coordinator
	// only when it yields, read by the finisher after its store of done.
	// It is a hint, not part of the protocol: a finisher that reads it
	// before the coordinator's store (or a stale one) only skips, or adds,
	// one yield.
	coordYielded atomic.Uint64
	_            [cacheLine - 24]byte

	// The coordinator's line: written by it on every run, read by no
	// worker on the common path (groupsLeft only by the last copies of
	// runs of more than groupSize copies).
	gen        uint64 // the current run's generation
	groupsLeft atomic.Int64
	coord      spin.Spinner // the coordinator's adaptive bursts
	// procs is GOMAXPROCS as the coordinator last read it, for its end-wait
	// budget; it re-reads it every procsEvery runs. runtime.GOMAXPROCS(0)
	// takes the scheduler's global lock, which every P's scheduling
	// contends for; reading it once per run put a process-wide lock on the
	// run path of every set.
	procs    int32
	procsAge uint32
	_        [cacheLine - 28]byte

	// Read-mostly: set by New (the spin budgets by SetSpin), read by
	// workers on every run, so it stays shared in their caches.
	slots  []slot
	groups []group
	// The spin budgets in nanoseconds: idle workers read idleSpin between
	// runs, so SetSpin may race with them and both are atomics.
	idleSpin atomic.Int64 // an idle worker's full spin budget
	endSpin  atomic.Int64 // the coordinator's spin budget
	_        [cacheLine - 64]byte

	// coordWake is where the coordinator blocks in its end wait: only the
	// finisher whose CAS took coordParked from the run's generation signals
	// it (finish), once, so its count is only ever 0, 1 or -1. Spin budget
	// 0: waitEnd spins before it parks here. Written only when the
	// coordinator parks, so it stays off the read-mostly line.
	coordWake semaphore.Semaphore
	_         [cacheLine - 24]byte

	// fails holds the first panic of the current run and the count (see
	// failures). Written only when a copy panics.
	fails failures

	// side is the side slot: one caller-runs run beside the current one
	// (side.go).
	side side

	// decoy is the goroutine wakers ready after a wake-up so that the woken
	// worker does not wait in the waker's runnext slot (decoy.go).
	decoy decoy
}

// New returns a Dispatcher for up to workers goroutines serving it (worker
// indices 0..workers-1), with the default spin budget. It panics if workers
// is outside [1, MaxSlots].
func New(workers int) *Dispatcher {
	if workers < 1 || workers > MaxSlots {
		panic(fmt.Sprintf("gang: New: workers = %d out of range [1, %d]", workers, MaxSlots))
	}
	d := &Dispatcher{
		slots:  make([]slot, workers),
		groups: make([]group, (workers+groupSize)/groupSize), // n <= workers+1
	}
	for i := range d.slots {
		d.slots[i].wake.SetSpin(0)
	}
	d.coordWake.SetSpin(0)
	d.side.wake.SetSpin(0) // the holder spins in waitSide before it parks here
	d.decoy.ch = make(chan struct{})
	d.decoy.done = make(chan struct{})
	d.procs = int32(runtime.GOMAXPROCS(0))
	d.noteProcs(d.procs)
	d.SetSpin(spin.Default)
	return d
}

// SetSpin sets how long an idle worker that recent runs needed polls for the
// next run, and how long the coordinator polls for the end of the current
// one, before parking; 0 parks at once. It may be called at any time; a
// waiter already spinning keeps the budget it started with. The
// coordinator's budget is further capped when its spinning would take a
// processor from the run's workers (see internal/spin).
func (d *Dispatcher) SetSpin(s time.Duration) {
	if s < 0 {
		panic(fmt.Sprintf("gang: SetSpin: negative spin budget %v", s))
	}
	d.idleSpin.Store(int64(s))
	d.endSpin.Store(int64(s))
}

// Plan is a task prepared for a run: the task and whether the caller may run
// its copies, as the task answered once (CallerCanRun may not be asked again
// during the run: a task that changed its answer would change how many
// workers the run needs). Only Prepare makes a Plan, so a Dispatcher never
// runs caller copies of a task that did not opt in.
type Plan struct {
	t          tasks.Task
	callerRuns bool
}

// CallerRuns reports whether the task opted in to caller-runs.
func (p Plan) CallerRuns() bool { return p.callerRuns }

// Prepare asks t once whether it opts in to caller-runs. A panic in
// CallerCanRun is returned as a *PanicError (Worker -1, on the caller); a
// runtime.Goexit in it proceeds. It panics if t is nil.
func Prepare(t tasks.Task) (p Plan, pe *PanicError) {
	if t == nil {
		panic("gang: Prepare: nil task")
	}
	if callerRuns, known := tasks.KnownCallerRuns(t); known {
		return Plan{t: t, callerRuns: callerRuns}, nil
	}
	return prepareSlow(t)
}

// prepareSlow asks a user's CallerCanRun, under recover. A Goexit in it goes
// on unwinding the caller, as a Goexit anywhere in the caller would.
func prepareSlow(t tasks.Task) (p Plan, pe *PanicError) {
	var opted bool
	if panicked, v, stack := call(func() { opted = tasks.CallerCanRun(t) }); panicked {
		return Plan{}, &PanicError{Task: safeName(t), Worker: -1, OnCaller: true, Value: v,
			Stack: stack, Panics: 1, Method: "CallerCanRun"}
	}
	return Plan{t: t, callerRuns: opted}, nil
}

// WorkerStats are worker i's counters: copies it started (Side: how many of
// them were copies of side runs, see RunBeside), and how it learned of the
// runs it saw (Ready: the run word was already new when it looked; Spun: it
// changed while the worker spun; Parks: the worker committed to park;
// Wakeups: parks that ended with a waker's permit).
type WorkerStats struct {
	Copies, Side, Ready, Spun, Parks, Wakeups uint64
}

// WorkerStats returns worker i's counters. Each is read atomically; the set
// is not a consistent snapshot.
func (d *Dispatcher) WorkerStats(i int) WorkerStats {
	s := &d.slots[i]
	return WorkerStats{Copies: s.copies.Load(), Side: s.side.Load(), Ready: s.ready.Load(), Spun: s.spun.Load(),
		Parks: s.parks.Load(), Wakeups: s.wakeups.Load()}
}
