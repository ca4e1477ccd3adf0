// Package gang is workgang's dispatcher: the protocol that hands n copies of a
// task to a gang of parked worker goroutines and waits for them, with the
// calling goroutine optionally claiming copies itself.
//
// It is the counterpart of HotSpot's WorkerTaskDispatcher. A Dispatcher owns
// two semaphores and two counters:
//
//   - start: one permit per copy that a worker may run;
//   - claimed: the next copy id; whoever holds a permit (or is the caller of a
//     caller-runs task) takes id = claimed++;
//   - notFinished: copies not yet returned; the copy that brings it to zero
//     signals end once;
//   - end: the coordinator waits on it.
//
// The package does not create goroutines: package workers owns them and calls
// Serve in a loop on each. A Dispatcher runs one task at a time; its caller
// must serialize Run and Stop (package workers does so with a mutex).
package gang

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/workgang/workgang/semaphore"
	"github.com/workgang/workgang/tasks"
)

// Layout constants. The hot block is one 64-byte line; the pads around it are
// 128 bytes to keep the adjacent-line prefetcher of x86 from pairing it with
// a neighbour's line.
const (
	lineSize = 64
	padSize  = 128
)

// Dispatcher hands copies of one task at a time to the goroutines that call
// Serve. The zero value is ready to use, with the semaphores' default spin.
// A Dispatcher must not be copied after first use.
//
// Its size is a multiple of 64 bytes and its hot words sit at a multiple of
// 64 from its start, so a Dispatcher allocated on its own (new(Dispatcher),
// as package workers does) has them on exactly one cache line: Go's
// allocator places an object of such a size at a multiple of its size class
// inside a page-aligned span. Embedded elsewhere it works the same, possibly
// straddling two lines.
type Dispatcher struct {
	_ [padSize]byte

	// The hot line: every word a run's copies and coordinator write. A
	// worker's round trip then moves this one line from the coordinator to
	// the worker and back, which is what an atomic ping-pong costs.
	start semaphore.Semaphore // 3 words

	// claimed hands out copy ids for the current run. Only holders of a
	// start permit (and the caller, for its own copies) increment it, and
	// exactly n of them exist per run, so ids are 0..n-1, each once. It is
	// reset by the coordinator before start is signalled.
	claimed atomic.Int64

	// notFinished counts copies of the current run that have not returned.
	// Each copy decrements it once after its Work returned; the decrement
	// that reaches zero signals end. Every earlier decrement is read by the
	// later ones (it is a read-modify-write chain), so all copies' writes
	// are synchronized before that final decrement, hence before end's
	// Signal, hence before the coordinator's end.Wait returns.
	notFinished atomic.Int64

	end semaphore.Semaphore // 3 words

	// The read-mostly line. task is written by the coordinator before it
	// signals start and read by a worker after it took a start permit: the
	// permit's hand-off orders the write before the read. The coordinator
	// writes it again only after end.Wait returned, which is after every
	// copy of the previous run decremented notFinished, which each did after
	// reading task. It is written only when it changes, so phases that
	// repeat a task leave the line shared in every worker's cache.
	task tasks.Task

	// panicked holds the first panic of the current run; the CAS from nil
	// makes "first" well defined when copies panic at once. panics counts
	// them all. Both are read by the coordinator after end.Wait; they are
	// written only when a copy panics.
	panicked atomic.Pointer[PanicError]
	panics   atomic.Int64

	// coord is the coordinator's adaptive spin state for end waits; only
	// the coordinator (the serialized caller of Run) touches it, and it
	// writes it only when the burst length changes.
	coord semaphore.Spinner
	_     [lineSize - 36]byte // the rest of the read-mostly line

	_ [padSize]byte
}

// hotOffset is where the hot line starts; layout_test.go checks it and the
// rest of the layout promised above.
const hotOffset = padSize

// SetSpin sets the spin budget of both semaphores: how long an idle worker
// polls for the next run, and how long the coordinator polls for the end of
// the current one, before parking. See semaphore.Semaphore.SetSpin.
func (d *Dispatcher) SetSpin(spin time.Duration) {
	d.start.SetSpin(spin)
	d.end.SetSpin(spin)
}

// Run runs n copies of t and returns after all of them returned. Copies run on
// goroutines blocked in Serve; when callerRuns is true the calling goroutine
// runs at least one copy itself and then claims every copy that no worker has
// taken yet. Run returns how many copies the caller ran and the first panic
// of any copy (nil if none panicked; a panic takes precedence over a worker
// copy's runtime.Goexit). It does not panic for a task's panic, with one
// exception: when a caller copy calls runtime.Goexit, Run cannot return, and
// it re-raises a panic of another copy of the run instead of letting the
// Goexit hide it.
//
// There must be at least n goroutines serving (n-1 when callerRuns), or the
// run cannot finish. Run must not be called concurrently with Run or Stop.
//
// Memory model: every copy's return is synchronized before Run's return; the
// call of Run is synchronized before every copy's start.
func (d *Dispatcher) Run(t tasks.Task, n int, callerRuns bool) (callerCopies int, p *PanicError) {
	if t == nil {
		panic("gang: Run: nil task")
	}
	if n < 1 {
		panic(fmt.Sprintf("gang: Run: n = %d, want n >= 1", n))
	}
	if !sameTask(d.task, t) {
		d.task = t
	}
	d.claimed.Store(0)
	d.notFinished.Store(int64(n))
	if callerRuns {
		callerCopies = d.runWithCaller(t, n)
	} else {
		// Release the n permits: the Add inside Signal publishes task and the
		// counters above to whichever goroutines take the permits.
		d.start.Signal(n)
	}
	d.waitEnd(n, callerRuns)
	return callerCopies, d.takePanic()
}

// OversubscribedWaitSpin caps how long the coordinator spins for the end of a
// run whose workers, with the coordinator, outnumber GOMAXPROCS: its spinning
// would then hold a processor that a worker with a copy still to run needs.
// It is about what parking and waking costs, so a short run still ends
// without a park. Measured on the 2-vCPU development VM (AMD EPYC, Go
// 1.26.8; go run ./perf -scenario grain, n = GOMAXPROCS, workers only, on a
// scratch copy with the cap): with the full 50 us spin the speedup over
// serial at 20 us of work was 0.92, with 3 us it was 1.25; BenchmarkGrain in
// package workers confirmed it (see docs/perf.md).
const OversubscribedWaitSpin = 3 * time.Microsecond

// waitEnd waits for the last copy's end.Signal. The fast case (the run is
// already over) is one CAS; otherwise the spin budget depends on whether this
// goroutine's spinning competes with the workers for processors: the workers
// of a run are n goroutines (n-1 with caller-runs) besides this one.
func (d *Dispatcher) waitEnd(n int, callerRuns bool) {
	if d.end.TryWait() {
		return
	}
	budget := d.end.Spin()
	busy := n + 1 // the workers and this goroutine
	if callerRuns {
		busy--
	}
	// GOMAXPROCS(0) takes the scheduler lock briefly (tens of ns); this is
	// the slow path, where we are about to spin anyway, and GOMAXPROCS may
	// change at run time, so it is read here rather than cached.
	if busy > runtime.GOMAXPROCS(0) {
		budget = min(budget, OversubscribedWaitSpin)
	}
	d.end.WaitWith(&d.coord, budget)
}

// runWithCaller signals n-1 permits, runs one copy on the caller, then keeps
// taking permits that no worker has taken yet and runs those copies too. A
// permit the caller takes is one no worker finds; exactly n-1 permits plus the
// caller's first copy make n claims, so the run's ids stay 0..n-1 and no
// permit outlives the run.
func (d *Dispatcher) runWithCaller(t tasks.Task, n int) (ran int) {
	// If a caller copy calls runtime.Goexit, this goroutine unwinds through
	// here: the copy's own accounting already ran (in execute's defer), but
	// the run may still have copies in flight on workers, and the caller of
	// Run (which holds the dispatcher) must not release it before they end.
	//
	// A panic of a worker copy of this run must not be lost with the
	// caller's Goexit: it is re-raised from here, which turns the Goexit
	// into that panic (the caller's own Goexit is not recorded as one; see
	// capture).
	done := false
	defer func() {
		if !done {
			d.end.Wait()
			// Workers' Goexits are not re-raised: the caller is exiting
			// the same way.
			if p := d.takePanic(); p != nil && !p.Goexit {
				panic(p)
			}
		}
	}()
	d.start.Signal(n - 1)
	for {
		d.execute(t, int(d.claimed.Add(1)-1), true)
		ran++
		if !d.start.TryWait() {
			break
		}
	}
	done = true
	return ran
}

// Serve waits for one copy of a run, runs it and returns true; it returns false
// without running anything when the dispatcher told it to stop. Worker
// goroutines call it (or ServeHow) in a loop.
//
// If the copy calls runtime.Goexit, the copy is accounted for (and reported to
// Run as a panic) before the goroutine exits; the owner of the goroutine should
// start a replacement.
func (d *Dispatcher) Serve() bool {
	ok, _ := d.ServeHow(nil)
	return ok
}

// ServeHow is Serve for a worker that keeps its own adaptive spin state in sp
// (see semaphore.Spinner; nil spins with fixed bursts), and also reports how
// the worker obtained its start permit (immediately, while spinning, or after
// parking), for statistics.
func (d *Dispatcher) ServeHow(sp *semaphore.Spinner) (bool, semaphore.Acquired) {
	how := semaphore.Immediate
	if !d.start.TryWait() {
		how = d.start.WaitWith(sp, d.start.Spin())
	}
	t := d.task
	if t == nil {
		return false, how
	}
	d.execute(t, int(d.claimed.Add(1)-1), false)
	return true, how
}

// Stop tells k serving goroutines to return false from Serve. It must not be
// called while a run is in progress.
func (d *Dispatcher) Stop(k int) {
	if k < 0 {
		panic(fmt.Sprintf("gang: Stop: negative count %d", k))
	}
	d.task = nil // published to the stopped goroutines by the permits below
	d.start.Signal(k)
}

// execute runs copy id of t, captures a panic or Goexit, and retires the copy.
func (d *Dispatcher) execute(t tasks.Task, id int, onCaller bool) {
	if trace.IsEnabled() {
		// One region per copy, on the goroutine that runs it, so a trace
		// shows which goroutine ran which copy and for how long.
		defer trace.StartRegion(context.Background(), t.Name()).End()
	}
	ok := false
	defer func() {
		if !ok {
			// recover must be called directly by the deferred function.
			d.capture(t, id, onCaller, recover())
		}
		// After this decrement the copy touches no run state: the last
		// decrement may let the coordinator return and start the next run.
		if d.notFinished.Add(-1) == 0 {
			d.end.Signal(1)
		}
	}()
	t.Work(id)
	ok = true
}

func (d *Dispatcher) capture(t tasks.Task, id int, onCaller bool, v any) {
	p := newPanicError(t, id, onCaller, v)
	if p == nil {
		return
	}
	d.panics.Add(1)
	// Keep the first panic, except that a real panic displaces a recorded
	// Goexit, so a run's report (and a caller's Goexit, see runWithCaller)
	// never hides a panic behind a Goexit. The CAS loop makes the choice
	// atomic against other copies capturing at the same time.
	for {
		cur := d.panicked.Load()
		if cur != nil && !(cur.Goexit && !p.Goexit) {
			return
		}
		if d.panicked.CompareAndSwap(cur, p) {
			return
		}
	}
}

// newPanicError describes how copy id of t failed, given recover's value v
// (called from the copy's deferred handler, so debug.Stack shows the panic
// site). It returns nil for the caller's own runtime.Goexit: that goes on
// unwinding the caller and is not a failure to report to that same caller.
func newPanicError(t tasks.Task, id int, onCaller bool, v any) *PanicError {
	p := &PanicError{Task: t.Name(), Worker: id, OnCaller: onCaller, Value: v}
	if v == nil {
		// Since Go 1.21 panic(nil) arrives as *runtime.PanicNilError, so a nil
		// value from a copy that did not return means runtime.Goexit.
		if onCaller {
			return nil
		}
		p.Goexit = true
	}
	p.Stack = debug.Stack()
	return p
}

// RunInline runs the single copy of t (id 0) on the calling goroutine,
// without any dispatcher: the n == 1 caller-runs case, which needs no
// worker, no lock and no shared state. A panic is re-raised as a
// *PanicError, as Run reports it; a runtime.Goexit proceeds.
func RunInline(t tasks.Task) {
	ok := false
	defer func() {
		if !ok {
			if p := newPanicError(t, 0, true, recover()); p != nil {
				p.Panics = 1
				panic(p)
			}
		}
	}()
	t.Work(0)
	ok = true
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

// PanicError reports a panic (or a runtime.Goexit) in a copy of a task. Run
// re-raises the first one with this type; its Stack is the stack of the
// panicking copy, captured where it panicked.
type PanicError struct {
	Task     string // the task's Name
	Worker   int    // the copy's id
	OnCaller bool   // the copy ran on the goroutine that called Run
	Goexit   bool   // the copy called runtime.Goexit instead of panicking
	Value    any    // the value passed to panic (nil for Goexit)
	Stack    []byte // the panicking goroutine's stack, from debug.Stack
	Panics   int    // how many copies of the run panicked in all
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
	return fmt.Sprintf("task %q copy %d (on %s) %s%s\n\n%s", p.Task, p.Worker, where, what, more, p.Stack)
}

// Unwrap returns the panic value if it is an error, so errors.Is and errors.As
// see through a re-raised panic.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// sameTask reports whether a and b are the same interface value word for
// word (same dynamic type and same data pointer). Unlike a == b it never
// panics on an uncomparable dynamic type; two conversions of one value type
// may compare different, which only costs a redundant write.
func sameTask(a, b tasks.Task) bool {
	return *(*[2]unsafe.Pointer)(unsafe.Pointer(&a)) == *(*[2]unsafe.Pointer)(unsafe.Pointer(&b))
}
