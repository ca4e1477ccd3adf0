// Package gang is workgang's dispatcher: the protocol that hands n copies of a
// task to a gang of persistent worker goroutines and waits for them, with the
// calling goroutine optionally claiming copies itself.
//
// It plays the part of HotSpot's WorkerTaskDispatcher, with a different
// protocol (docs/threading-model.md argues it; docs/model/dispatch.pml
// model-checks it):
//
//   - One run word, written once per run by the coordinator: a generation
//     number, n and the caller-runs flag. Idle workers that are awake poll it,
//     so an awake gang learns of a run through one cache line read by all.
//   - One claim word per copy, on the line of the worker the copy is meant
//     for: copy c is meant for worker c, which claims it with one CAS on its
//     own line. Anyone else (the caller of a caller-runs run, or an awake
//     worker that has no copy of its own) may claim a copy whose worker has
//     not, so no copy waits for a parked worker that something awake could
//     run. A claim names the run's generation, so a worker that read an old
//     run word can never claim a copy of a newer run.
//   - Parked workers are woken in a tree: the coordinator wakes workers 0
//     and 1, worker i wakes 2i+2 and 2i+3, so waking k workers costs each
//     goroutine at most two wake-ups and the run O(log k) wake latencies.
//   - Finished copies count down in groups of eight, each group on its own
//     line, and the last group reports to the coordinator: no line is
//     written by every copy of a large run.
//   - Idle workers spin only while runs need them: a worker that saw a run
//     without running a copy of it spins an eighth of its budget next time,
//     and after two such runs parks at once.
//
// The package does not create goroutines: package workers owns them and
// calls Serve on each. A Dispatcher runs one task at a time; its caller
// serializes Run and Stop (package workers does so with a mutex).
package gang

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/tasks"
)

// cacheLine is the padding unit: two 64-byte lines, so that the adjacent-line
// prefetcher of x86 does not pair a hot word with a neighbour's.
const cacheLine = 128

// The run word: gen<<genShift | stopBit | callerBit | n.
const (
	nBits     = 20
	nMask     = 1<<nBits - 1
	callerBit = 1 << nBits
	stopBit   = 1 << (nBits + 1)
	genShift  = nBits + 2
	genBits   = 64 - genShift
	genMask   = 1<<genBits - 1

	// MaxWorkers is the most worker slots a Dispatcher can have (n must
	// fit in the run word).
	MaxWorkers = nMask

	// groupSize is how many copies share one countdown line at the end of
	// a run.
	groupSize = 8

	// stealAhead is how many of the following copies a worker tries to
	// claim after its own (see Serve).
	stealAhead = 2

	// procsEvery is how many runs the coordinator's cached GOMAXPROCS
	// serves before it is read again.
	procsEvery = 1024
)

// genOf returns the low genBits bits of the generation in run word r; the
// full 64-bit generation is in Dispatcher.runGen (see snapshot).
func genOf(r uint64) uint64 { return r >> genShift }

// Worker slot states.
const (
	awake  uint32 = 0 // running, spinning, or about to look at the run word
	parked uint32 = 1 // committed to block on its wake channel
	waking uint32 = 2 // a waker sent its token; the worker is not running yet
)

// slot is worker i's state, on two padded lines. The first holds what
// wakers and helpers read on every run (state) and change only when the
// worker parks or is woken, so while the worker stays awake the line stays
// shared in their caches and the coordinator's look at it costs no transfer.
// The second holds what changes on every run: the claim word (written by the
// claimer) and what only worker i's goroutine writes (or its replacement,
// which receives it with the go statement that starts it).
type slot struct {
	// state is awake, parked or waking: the Dekker pair of park and
	// wakeIfParked, and what helpers read to find copies no one runs yet.
	state atomic.Uint32
	// wake carries the one token a waker owes a parked worker.
	wake chan struct{}
	_    [cacheLine - 16]byte

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
	// Counters: single writer (the worker), atomics so Stats may read them.
	copies, ready, spun, parks, wakeups atomic.Uint64
	_                                   [cacheLine - 64]byte // layout_test.go checks the size
}

// group is one countdown line of a run's end accounting.
type group struct {
	left atomic.Int64
	_    [cacheLine - 8]byte
}

// Dispatcher hands copies of one task at a time to the goroutines that call
// Serve. Create one with New. A Dispatcher must not be copied.
type Dispatcher struct {
	_ [cacheLine]byte

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
	_           [cacheLine - 16]byte

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
	slots     []slot
	groups    []group
	coordWake chan struct{}
	// The spin budgets in nanoseconds: idle workers read idleSpin between
	// runs, so SetSpin may race with them and both are atomics.
	idleSpin atomic.Int64 // an idle worker's full spin budget
	endSpin  atomic.Int64 // the coordinator's spin budget
	_        [cacheLine - 72]byte

	// panicked holds the first panic of the current run (see capture);
	// panics counts them all. Written only when a copy panics.
	panicked atomic.Pointer[PanicError]
	panics   atomic.Int64
}

// New returns a Dispatcher for up to workers goroutines serving it (worker
// indices 0..workers-1), with the default spin budget. It panics if workers
// is outside [1, MaxWorkers].
func New(workers int) *Dispatcher {
	if workers < 1 || workers > MaxWorkers {
		panic(fmt.Sprintf("gang: New: workers = %d out of range [1, %d]", workers, MaxWorkers))
	}
	d := &Dispatcher{
		slots:     make([]slot, workers),
		groups:    make([]group, (workers+groupSize)/groupSize), // n <= workers+1
		coordWake: make(chan struct{}, 1),
	}
	for i := range d.slots {
		d.slots[i].wake = make(chan struct{}, 1)
	}
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

// prepareSlow asks a user's CallerCanRun, under recover.
func prepareSlow(t tasks.Task) (p Plan, pe *PanicError) {
	normal := false
	defer func() {
		if !normal { // a panic, possibly panic(nil), or a Goexit (which goes on)
			pe = newPanicError(t, -1, true, recover(), "CallerCanRun")
		}
	}()
	p = Plan{t: t, callerRuns: tasks.CallerCanRun(t)}
	normal = true
	return p, nil
}

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
	if m > 0 {
		d.wakeIfParked(0)
	}
	if m > 1 {
		d.wakeIfParked(1)
	}
	if p.callerRuns {
		callerCopies = d.runOnCaller(p.t, n, m, gen)
	}
	d.waitEnd(gen, m)
	// Every copy has returned and no goroutine reads task before a claim of
	// a later run: nothing of the task stays reachable from d.
	d.task = nil
	return callerCopies, d.takePanic()
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
			d.waitEnd(gen, m)
			d.task = nil
			if p := d.takePanic(); p != nil && !p.Goexit {
				panic(p)
			}
		}
	}()
	d.execute(t, n-1, n, gen, true)
	ran = 1
	for c := m - 1; c >= 0; c-- {
		if d.claim(c, gen) {
			d.execute(t, c, n, gen, true)
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
// one waker owe the token, so the channel (capacity 1) never blocks. The
// worker stays marked waking until it runs again, so that awake goroutines
// may take its copy meanwhile (a wake-up takes microseconds).
//
// Against park: the worker stores parked, then loads the run word; a waker
// stores the run word (before calling this), then loads state. With
// sequentially consistent atomics at least one of them sees the other's
// store: either the worker sees the new run and does not block, or the waker
// sees parked and hands it a token. No wake-up is lost.
func (d *Dispatcher) wakeIfParked(i int) {
	s := &d.slots[i]
	if s.state.Load() == parked && s.state.CompareAndSwap(parked, waking) {
		s.wake <- struct{}{}
	}
}

// Serve runs worker i: it waits for runs and executes the copies they have
// for it until Stop, then returns. If a copy calls runtime.Goexit, the copy
// is accounted for (and reported to Run) before the goroutine exits; the
// owner of the goroutine should start a replacement calling Serve(i), which
// resumes where the old one stopped.
func (d *Dispatcher) Serve(i int) {
	s := &d.slots[i]
	for {
		r, gen := d.next(s)
		s.seen = gen
		if r&stopBit != 0 {
			return
		}
		n := int(r & nMask)
		m := n
		if r&callerBit != 0 {
			m--
		}
		// Wake this worker's children in the tree before running anything:
		// the wake-ups go out in parallel with the copies.
		if c := 2*i + 2; c < m {
			d.wakeIfParked(c)
			if c+1 < m {
				d.wakeIfParked(c + 1)
			}
		}
		if i < m {
			// Needed: spin at full budget after this run, even if the
			// caller took this copy first (a worker that loses such races
			// is still the one the next run will want).
			s.misses = 0
			if d.claim(i, gen) {
				s.copies.Add(1)
				d.execute(d.task, i, n, gen, false)
			}
			// Then take the next few copies their workers have not started:
			// a worker that is awake but not running (its processor is
			// busy, as when the workers and the coordinator outnumber
			// GOMAXPROCS) would otherwise hold up the run. A bounded look,
			// so large runs do not make every worker read every slot.
			for k := 1; k <= stealAhead && k < m; k++ {
				if c := (i + k) % m; d.claim(c, gen) {
					s.copies.Add(1)
					d.execute(d.task, c, n, gen, false)
				}
			}
			continue
		}
		// A surplus worker that is awake takes copies whose workers are
		// parked or still waking up: they are the ones the run would wait
		// for.
		helped := false
		for c := range m {
			if d.slots[c].state.Load() != awake && d.claim(c, gen) {
				s.copies.Add(1)
				d.execute(d.task, c, n, gen, false)
				helped = true
			}
		}
		if helped {
			s.misses = 0
		} else if s.misses < 2 {
			s.misses++
		}
	}
}

// next waits for a run word newer than the last one the worker acted on and
// returns it with its full generation.
func (d *Dispatcher) next(s *slot) (r, gen uint64) {
	if d.fresh(s) {
		s.ready.Add(1)
		return d.snapshot()
	}
	budget := d.idleBudget(s)
	if budget > 0 {
		if spin.Until(budget, &s.spin, func() bool { return d.fresh(s) }) {
			s.spun.Add(1)
			return d.snapshot()
		}
	}
	// A waker acting on an old run word (a slow parent) may wake this
	// worker with nothing new to do: park again then.
	for {
		var parkedAt time.Time
		if budget > 0 {
			parkedAt = time.Now() // the slow path: about to block anyway
		}
		slept := d.park(s)
		if slept && budget > 0 && s.misses == 0 {
			d.learn(s, time.Since(parkedAt), budget)
		}
		if d.fresh(s) {
			return d.snapshot()
		}
	}
}

// maxBoost bounds how far learn stretches a worker's full budget: 2^4 times
// the set's budget, and never past maxLearned.
const (
	maxBoost   = 4
	maxLearned = time.Millisecond
)

// learn adapts worker s's full budget to the gaps between the runs that
// need it: a worker woken less than 4 budgets after it parked would have
// saved the wake-up (microseconds, on the run's critical path) by spinning a
// little longer, so its budget doubles; one that slept 32 budgets or more
// halves it again. A phase sequence with a steady gap a little longer than
// the budget (a collector's pauses between mutator slices) so keeps its
// workers awake across the gap; an idle set still parks, after at most
// maxLearned. The pause scenario of the perf harness is the benchmark behind
// it (docs/perf.md).
func (d *Dispatcher) learn(s *slot, slept, budget time.Duration) {
	switch {
	case slept < 4*budget && s.boost < maxBoost && 2*budget <= maxLearned:
		s.boost++
	case slept >= 32*budget && s.boost > 0:
		s.boost--
	}
}

// fresh reports whether the run word is newer than the last one worker s
// acted on: the poll of an idle worker, one load of a line that stays
// shared until the next run.
func (d *Dispatcher) fresh(s *slot) bool {
	return genOf(d.run.Load()) != s.seen&genMask
}

// idleBudget is how long worker s spins for the next run: the full budget
// (the set's, stretched by learn) if the last run it saw needed it, an
// eighth of the set's after one run without, none after two (it parks at
// once and costs nothing until a run needs it).
func (d *Dispatcher) idleBudget(s *slot) time.Duration {
	switch s.misses {
	case 0:
		return time.Duration(d.idleSpin.Load()) << s.boost
	case 1:
		return time.Duration(d.idleSpin.Load()) / 8
	default:
		return 0
	}
}

// park commits worker s to block, re-checks the run word, and blocks until a
// waker hands it a token. See wakeIfParked for the pairing. On return the
// run word is usually newer than s.seen (not always: see next). It reports
// whether the worker slept (blocked until a waker's token).
func (d *Dispatcher) park(s *slot) (slept bool) {
	s.parks.Add(1)
	s.state.Store(parked)
	if d.fresh(s) {
		// A run arrived between the spin and the commit. Withdraw; if a
		// waker got there first, it owes (and sends) a token: take it so the
		// channel is empty for the next park.
		if !s.state.CompareAndSwap(parked, awake) {
			<-s.wake
			s.state.Store(awake)
		}
		return false
	}
	// The waker stored the run word before its CAS to waking and its send;
	// the send is synchronized before this receive, so the run is visible.
	<-s.wake
	s.wakeups.Add(1)
	s.state.Store(awake)
	return true
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
		d.wakeIfParked(i)
	}
}

// waitEnd waits until the last copy of run gen finished: it spins (for a
// budget capped when the run's m workers and this goroutine outnumber the
// processors), then parks.
func (d *Dispatcher) waitEnd(gen uint64, m int) {
	if d.done.Load() == gen {
		return
	}
	if d.procsAge%procsEvery == 0 {
		d.procs = int32(runtime.GOMAXPROCS(0))
	}
	d.procsAge++
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
			<-d.coordWake // finish got there first and sent the token
		}
		return
	}
	// Only run gen's finisher sends (its CAS from gen), and only once.
	<-d.coordWake
}

// CoordinatorParked reports whether the coordinator is asleep waiting for the
// end of a run (it spun for its budget first). Package workers's cycle check
// reads it: a coordinator that sleeps there waits for the run's copies.
func (d *Dispatcher) CoordinatorParked() bool { return d.coordParked.Load() != 0 }

// finish reports the end of run gen to the coordinator: store done, then
// wake the coordinator if it sleeps for this run. The CAS from gen makes the
// token this run's: a finisher delayed past the coordinator's next park
// finds another generation there and sends nothing.
func (d *Dispatcher) finish(gen uint64) {
	d.done.Store(gen)
	if d.coordParked.Load() == gen && d.coordParked.CompareAndSwap(gen, 0) {
		d.coordWake <- struct{}{}
	}
}

// execute runs copy c of run gen (n copies) of t, captures a panic,
// panic(nil) or Goexit, and retires the copy.
func (d *Dispatcher) execute(t tasks.Task, c, n int, gen uint64, onCaller bool) {
	// Registered first, so it runs last, whatever the copy or the capture
	// does (even a Goexit from a hostile Name during capture).
	defer d.retire(c, n, gen)
	returned := false
	defer func() {
		if !returned {
			// runCopy did not return: the copy called runtime.Goexit (it
			// recovers panics and returns), or Name did, for the trace
			// region below. There is no panic to recover.
			d.capture(t, c, onCaller, nil, true, debug.Stack())
		}
	}()
	var namePanic *PanicError
	if trace.IsEnabled() {
		// One region per copy, on the goroutine that runs it, so a trace
		// shows which goroutine ran which copy and for how long. A panic
		// in Name is the copy's failure (the copy still runs, unnamed).
		var name string
		if name, namePanic = CheckedName(t); namePanic == nil {
			defer trace.StartRegion(context.Background(), name).End()
		}
	}
	panicked, v, stack := runCopy(t, c)
	returned = true
	if panicked {
		d.capture(t, c, onCaller, v, false, stack)
	} else if namePanic != nil {
		d.capture(t, c, onCaller, namePanic.Value, false, namePanic.Stack)
	}
}

// runCopy calls t.Work(c). It returns normally after a panic too, with the
// value, because it recovers; only a runtime.Goexit leaves it without
// returning. That tells a panic(nil) (under GODEBUG=panicnil=1 recover
// returns nil for it) from a Goexit (recover returns nil and unwinding goes
// on). The stack is taken in the deferred call, so it shows the panic site.
func runCopy(t tasks.Task, c int) (panicked bool, v any, stack []byte) {
	normal := false
	defer func() {
		if !normal {
			panicked, v = true, recover()
			if panicked {
				stack = debug.Stack()
			}
		}
	}()
	t.Work(c)
	normal = true
	return false, nil, nil
}

// retire counts copy c of an n-copy run as finished. Each decrement is a
// read-modify-write of its group's counter, so the one that reaches zero
// comes after every other copy's decrement of that group in the counter's
// modification order and so after those copies' writes; the same holds for
// groupsLeft, and finish's store publishes it all to the coordinator. After
// its decrement a copy touches no run state: the last one may let Run
// return and the next run start.
func (d *Dispatcher) retire(c, n int, gen uint64) {
	if d.groups[c/groupSize].left.Add(-1) != 0 {
		return
	}
	if n > groupSize && d.groupsLeft.Add(-1) != 0 {
		return
	}
	d.finish(gen)
}

// capture records a failed copy.
func (d *Dispatcher) capture(t tasks.Task, c int, onCaller bool, v any, goexit bool, stack []byte) {
	if goexit && onCaller {
		// The caller's own Goexit goes on unwinding the caller: it is not a
		// failure to report to that same caller.
		return
	}
	p := &PanicError{Task: "?", Worker: c, OnCaller: onCaller, Value: v, Goexit: goexit, Stack: stack}
	d.panics.Add(1)
	// Keep the first panic, except that a real panic displaces a recorded
	// Goexit, so a run's report never hides a panic behind a Goexit. The CAS
	// loop makes the choice atomic against other copies capturing at once.
	for {
		cur := d.panicked.Load()
		if cur != nil && !(cur.Goexit && !p.Goexit) {
			break
		}
		if d.panicked.CompareAndSwap(cur, p) {
			break
		}
	}
	// Last, because a hostile Name may panic (caught) or Goexit (then the
	// record above stands, with "?" for the name). The coordinator reads
	// Task after the run's end, which this copy's retire precedes.
	p.Task = SafeName(t)
}

// SafeName returns t.Name(), or a description of the panic if Name panics.
func SafeName(t tasks.Task) (name string) {
	defer func() {
		if v := recover(); v != nil {
			name = fmt.Sprintf("<Name panicked: %v>", v)
		}
	}()
	return t.Name()
}

// CheckedName returns t.Name(). A panic in Name (panic(nil) included) comes
// back as a *PanicError (Worker -1, on the caller, Method "Name") instead of
// an invented name, so that the trace regions, which call Name on every run,
// report it as every other failure of a task method is reported; a
// runtime.Goexit in Name proceeds.
func CheckedName(t tasks.Task) (name string, pe *PanicError) {
	normal := false
	defer func() {
		if !normal {
			pe = newPanicError(t, -1, true, recover(), "Name")
		}
	}()
	name = t.Name()
	normal = true
	return name, nil
}

// newPanicError describes a panic of the caller's call of method (not a copy).
func newPanicError(t tasks.Task, c int, onCaller bool, v any, method string) *PanicError {
	return &PanicError{Task: SafeName(t), Worker: c, OnCaller: onCaller, Value: v,
		Stack: debug.Stack(), Panics: 1, Method: method}
}

// RunInline runs the single copy of t (id 0) on the calling goroutine, without
// any worker: the n == 1 caller-runs case. It returns the copy's panic as a
// *PanicError (panic(nil) included); a runtime.Goexit proceeds.
func RunInline(t tasks.Task) *PanicError {
	if panicked, v, stack := runCopy(t, 0); panicked {
		return &PanicError{Task: SafeName(t), Worker: 0, OnCaller: true, Value: v, Stack: stack, Panics: 1}
	}
	return nil
}

// takePanic returns the run's first panic, with the total count, and clears
// the state for the next run.
func (d *Dispatcher) takePanic() *PanicError {
	if d.panicked.Load() == nil {
		return nil
	}
	p := d.panicked.Swap(nil)
	p.Panics = int(d.panics.Swap(0))
	return p
}

// WorkerStats are worker i's counters: copies it started, and how it learned
// of the runs it saw (Ready: the run word was already new when it looked;
// Spun: it changed while the worker spun; Parks: the worker committed to
// park; Wakeups: parks that ended with a waker's token).
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

// PanicError reports a panic (or a runtime.Goexit) in a copy of a task, or a
// panic in the task's CallerCanRun. Run re-raises the first one with this
// type; its Stack is the stack of the panicking goroutine, captured where it
// panicked.
type PanicError struct {
	Task     string // the task's Name ("?" if Name could not be called)
	Worker   int    // the copy's id (-1 for a panic outside any copy)
	OnCaller bool   // the panic happened on the goroutine that called Run
	Goexit   bool   // the copy called runtime.Goexit instead of panicking
	Value    any    // the value passed to panic (nil for Goexit and panic(nil))
	Stack    []byte // the panicking goroutine's stack, from debug.Stack
	Panics   int    // how many copies of the run panicked in all
	Method   string // the task method that panicked if not Work ("CallerCanRun")
}

// Error returns the panic value, its origin and its stack.
func (p *PanicError) Error() string {
	where := "worker"
	if p.OnCaller {
		where = "caller"
	}
	what := fmt.Sprintf("panic: %v", p.Value)
	if p.Goexit {
		what = "called runtime.Goexit"
	}
	more := ""
	if p.Panics > 1 {
		more = fmt.Sprintf(" (and %d more copies panicked)", p.Panics-1)
	}
	if p.Method != "" {
		return fmt.Sprintf("task %q %s (on %s) %s\n\n%s", p.Task, p.Method, where, what, p.Stack)
	}
	return fmt.Sprintf("task %q copy %d (on %s) %s%s\n\n%s", p.Task, p.Worker, where, what, more, p.Stack)
}

// Unwrap returns the panic value if it is an error, so errors.Is and errors.As
// see through a re-raised panic.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}
