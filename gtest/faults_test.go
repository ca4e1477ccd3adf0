package gtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/race"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// faultLimit is how long a fault scenario may take before it counts as hung.
// It is a hang detector, far above any scenario's duration on a loaded
// machine, not a timing assertion.
const faultLimit = time.Minute

// finishWithin runs fn and, if fn has not returned within faultLimit, ends
// the test binary with every goroutine's stack (testutil.Within): a hung run
// holds its set's lock, so the test's deferred Close (and goleak) would only
// hang behind it.
func finishWithin(t *testing.T, what string, fn func()) {
	t.Helper()
	testutil.Within(t, what, faultLimit, fn)
}

// outcome is how a call on its own goroutine ended (testutil.Call), with
// the faultTask copies that had run by then.
type outcome struct {
	testutil.Outcome
	copies int // faultTask copies that had run when the goroutine ended
}

// callOn runs fn on a new goroutine and reports how it ended; a Goexit there
// ends only that goroutine. ft, if not nil, is sampled as the goroutine ends
// (in a deferred call, so also when fn panics or calls Goexit).
func callOn(ft *faultTask, fn func()) (o outcome) {
	o.Outcome = testutil.Call(func() {
		if ft != nil {
			defer func() { o.copies = int(ft.total.Load()) }()
		}
		fn()
	})
	return o
}

// faultBoom is the value a faultTask copy panics with.
type faultBoom struct{ id int }

func (b faultBoom) Error() string { return fmt.Sprintf("fault in copy %d", b.id) }

var errFault = errors.New("fault")

func (b faultBoom) Unwrap() error { return errFault }

// faultTask runs n copies; fail(id, onCaller) says whether a copy panics
// (or, with goexit, calls runtime.Goexit). It records each copy.
type faultTask struct {
	caller  bool
	callerG uint64
	goexit  bool
	fail    func(id int, onCaller bool) bool
	ran     []atomic.Int32
	onC     []atomic.Bool
	failed  []atomic.Bool
	total   atomic.Int32
}

func newFaultTask(n int, caller, goexit bool, fail func(id int, onCaller bool) bool) *faultTask {
	return &faultTask{caller: caller, goexit: goexit, fail: fail,
		ran: make([]atomic.Int32, n), onC: make([]atomic.Bool, n), failed: make([]atomic.Bool, n)}
}

func (f *faultTask) Name() string       { return "fault" }
func (f *faultTask) CallerCanRun() bool { return f.caller }
func (f *faultTask) Work(id int) {
	f.ran[id].Add(1)
	onCaller := goid.Get() == f.callerG
	f.onC[id].Store(onCaller)
	defer f.total.Add(1)
	if f.fail(id, onCaller) {
		f.failed[id].Store(true)
		if f.goexit {
			runtime.Goexit()
		}
		panic(faultBoom{id})
	}
}

// run makes one RunN of f on w from a new goroutine.
func (f *faultTask) run(w *workers.Workers, n int) outcome {
	return callOn(f, func() {
		f.callerG = goid.Get()
		w.RunN(f, n)
	})
}

func (f *faultTask) checkEachOnce(t *testing.T) {
	t.Helper()
	for id := range f.ran {
		require.Equal(t, int32(1), f.ran[id].Load(), "copy %d", id)
	}
}

func (f *faultTask) failedIDs() (ids []int) {
	for id := range f.failed {
		if f.failed[id].Load() {
			ids = append(ids, id)
		}
	}
	return ids
}

// checkUsable runs a full run on w and checks it.
func checkUsable(t *testing.T, w *workers.Workers) {
	t.Helper()
	n := w.MaxWorkers()
	p := newFaultTask(n, false, false, func(int, bool) bool { return false })
	var o outcome
	finishWithin(t, "a run after the fault", func() { o = p.run(w, n) })
	require.Nil(t, o.Value, "the set is not usable after the fault")
	require.False(t, o.Goexit)
	p.checkEachOnce(t)
}

func faultReps() int {
	switch {
	case testing.Short():
		return 20
	case race.Enabled:
		return 200
	default:
		return 1000
	}
}

// TestFaultPanics: panics in the first, the last, every copy and in the
// caller's copies (n > 1 dispatched and n == 1 inline) are re-raised at the
// caller as *workers.PanicError naming one failing copy, counting all of
// them, with that copy's stack; every other copy runs to completion, and the
// set stays usable.
func TestFaultPanics(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const max = 6
	w := workers.New("faults", max)
	defer w.Close()
	var runs, panics int
	defer func() { t.Logf("%d runs, %d panicking copies", runs, panics) }()
	for _, tc := range []struct {
		name   string
		caller bool
		ns     []int
		fail   func(n int) func(id int, onCaller bool) bool
	}{
		{"first copy", false, []int{1, 2, max}, func(int) func(int, bool) bool { return func(id int, _ bool) bool { return id == 0 } }},
		{"last copy", false, []int{1, 3, max}, func(n int) func(int, bool) bool { return func(id int, _ bool) bool { return id == n-1 } }},
		{"every copy", false, []int{1, 2, max}, func(int) func(int, bool) bool { return func(int, bool) bool { return true } }},
		{"first copy/caller-runs", true, []int{2, max}, func(int) func(int, bool) bool { return func(id int, _ bool) bool { return id == 0 } }},
		{"last copy/caller-runs", true, []int{2, max}, func(n int) func(int, bool) bool { return func(id int, _ bool) bool { return id == n-1 } }},
		{"every copy/caller-runs", true, []int{2, max}, func(int) func(int, bool) bool { return func(int, bool) bool { return true } }},
		{"caller copies", true, []int{2, 3, max}, func(int) func(int, bool) bool { return func(_ int, onC bool) bool { return onC } }},
		{"worker copies/caller-runs", true, []int{2, max}, func(int) func(int, bool) bool { return func(_ int, onC bool) bool { return !onC } }},
		{"inline caller copy", true, []int{1}, func(int) func(int, bool) bool { return func(int, bool) bool { return true } }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range tc.ns {
				for range faultReps() / 4 {
					f := newFaultTask(n, tc.caller, false, tc.fail(n))
					var o outcome
					finishWithin(t, tc.name, func() { o = f.run(w, n) })
					f.checkEachOnce(t)
					failed := f.failedIDs()
					runs++
					panics += len(failed)
					if len(failed) == 0 {
						// "worker copies" with every copy on the caller.
						require.Nil(t, o.Value)
						continue
					}
					require.IsType(t, &workers.PanicError{}, o.Value, "n=%d", n)
					pe := o.Value.(*workers.PanicError)
					assert.Contains(t, failed, pe.Worker, "the reported copy did not fail")
					assert.Equal(t, len(failed), pe.Panics, "Panics counts every failing copy")
					assert.Equal(t, f.onC[pe.Worker].Load(), pe.OnCaller)
					assert.False(t, pe.Goexit)
					assert.Equal(t, faultBoom{pe.Worker}, pe.Value)
					assert.ErrorIs(t, pe, errFault, "errors.Is sees through PanicError")
					assert.Equal(t, "fault", pe.Task)
					assert.Contains(t, string(pe.Stack), "(*faultTask).Work", "the stack is the panicking copy's")
					assert.Contains(t, pe.Error(), fmt.Sprintf("task \"fault\" copy %d", pe.Worker))
					if n == 1 && tc.caller {
						assert.True(t, pe.OnCaller, "an inline copy runs on the caller")
					}
				}
			}
			checkUsable(t, w)
		})
	}
}

// TestFaultGoexit: runtime.Goexit in worker copies is reported as a
// PanicError with Goexit set and the worker is replaced; in a caller copy
// (dispatched or inline) it ends the calling goroutine, but only after every
// other copy of the run finished, and the set stays usable. No goroutine
// leaks either way.
func TestFaultGoexit(t *testing.T) {
	const max = 4
	var runs, exits int
	defer func() { t.Logf("%d runs, %d copies called Goexit", runs, exits) }()
	for _, tc := range []struct {
		name       string
		caller     bool
		n          int
		fail       func(id int, onCaller bool) bool
		callerExit bool
	}{
		{"one worker copy", false, max, func(id int, _ bool) bool { return id == 1 }, false},
		{"every worker copy", false, max, func(int, bool) bool { return true }, false},
		{"worker copies/caller-runs", true, max, func(_ int, onC bool) bool { return !onC }, false},
		{"caller copy", true, max, func(_ int, onC bool) bool { return onC }, true},
		{"every copy/caller-runs", true, max, func(int, bool) bool { return true }, true},
		{"inline caller copy", true, 1, func(int, bool) bool { return true }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			w := workers.New("goexit", max)
			defer w.Close()
			for range faultReps() / 4 {
				f := newFaultTask(tc.n, tc.caller, true, tc.fail)
				var o outcome
				finishWithin(t, tc.name, func() { o = f.run(w, tc.n) })
				f.checkEachOnce(t)
				failed := f.failedIDs()
				runs++
				exits += len(failed)
				callerExited := false
				for _, id := range failed {
					callerExited = callerExited || f.onC[id].Load()
				}
				if callerExited {
					require.True(t, o.Goexit, "a caller copy called Goexit; the caller must exit")
					require.Nil(t, o.Value)
					require.Equal(t, tc.n, o.copies, "the caller exited before every copy finished")
					continue
				}
				require.False(t, tc.callerExit && tc.n == 1, "the inline copy must run on the caller")
				if len(failed) == 0 {
					require.Nil(t, o.Value)
					continue
				}
				require.False(t, o.Goexit, "a worker's Goexit must not end the caller")
				require.IsType(t, &workers.PanicError{}, o.Value)
				pe := o.Value.(*workers.PanicError)
				assert.True(t, pe.Goexit)
				assert.Nil(t, pe.Value)
				assert.Contains(t, failed, pe.Worker)
				assert.Equal(t, len(failed), pe.Panics)
				assert.False(t, pe.OnCaller)
				assert.Contains(t, pe.Error(), "called runtime.Goexit")
				assert.LessOrEqual(t, w.CreatedWorkers(), max, "replacements must not add workers")
			}
			checkUsable(t, w)
		})
	}
}

// TestFaultGoexitOnCallerWithWorkerPanic: a caller copy calls Goexit while a
// worker copy of the same run panics. Whatever is reported, every copy runs
// once, the caller exits only after all of them, and the set stays usable.
// (Run re-raises the worker's panic, which replaces the caller's Goexit; see
// docs/testing.md.)
func TestFaultGoexitOnCallerWithWorkerPanic(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	w := workers.New("goexit-panic", 3)
	defer w.Close()
	for range faultReps() / 4 {
		f := newFaultTask(3, true, false, nil)
		f.fail = func(id int, onC bool) bool {
			if onC {
				runtime.Goexit()
			}
			return true // workers panic
		}
		var o outcome
		finishWithin(t, "Goexit on caller + panic on worker", func() { o = f.run(w, 3) })
		f.checkEachOnce(t)
		// The workers' panic must not be swallowed by the caller's Goexit:
		// Run re-raises it, which turns the Goexit into that panic. (This
		// suite found the runtime dropping it; see docs/testing.md.)
		require.False(t, o.Goexit, "the caller's Goexit hid the workers' panic")
		require.IsType(t, &workers.PanicError{}, o.Value)
		pe := o.Value.(*workers.PanicError)
		require.False(t, pe.OnCaller, "the reported panic is a worker's")
		require.False(t, pe.Goexit)
		require.Equal(t, 2, pe.Panics, "the caller's own Goexit is not counted as a panic")
		require.Equal(t, 3, o.copies)
		checkUsable(t, w)
	}
}

// TestFaultCloseRacingRun: Close from one goroutine while others make runs,
// Run with the active count and SetActiveWorkers. Each run either completes
// with every copy once or panics "set is closed" having run none; Close is
// idempotent and may also race with itself; nothing hangs or leaks.
func TestFaultCloseRacingRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	reps := faultReps()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	var completed, refused atomic.Int64
	for rep := range reps {
		max := 1 + rng.IntN(6)
		spin := []time.Duration{0, time.Microsecond, 20 * time.Microsecond}[rng.IntN(3)]
		w := workers.New(fmt.Sprintf("race-%d", rep), max, workers.WithSpin(spin))
		goroutines := 1 + rng.IntN(4)
		closers := 1 + rng.IntN(2)
		delay := rng.IntN(4)
		var wg sync.WaitGroup
		errs := make(chan error, goroutines+closers)
		for g := range goroutines {
			seed := rng.Uint64()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, uint64(g)))
				for {
					n := 1 + r.IntN(max)
					caller := r.IntN(2) == 0
					f := newFaultTask(n, caller, false, func(int, bool) bool { return false })
					op := "RunN"
					var o outcome
					switch r.IntN(8) {
					case 0:
						op = "SetActiveWorkers"
						o = callOn(nil, func() { w.SetActiveWorkers(n) })
					case 1:
						op = "Run"
						// The active count may change under us (another
						// goroutine's SetActiveWorkers): size the check
						// by what ran, requiring ids 0..k-1 each once.
						f = newFaultTask(max, caller, false, func(int, bool) bool { return false })
						o = callOn(f, func() { f.callerG = goid.Get(); w.Run(f) })
					default:
						o = f.run(w, n)
					}
					if o.Value != nil {
						want := fmt.Sprintf("workers: %s on %q: set is closed", op, w.Name())
						if o.Value != want {
							errs <- fmt.Errorf("%s: panic %#v; want nil or %q", op, o.Value, want)
						} else if o.copies != 0 {
							errs <- fmt.Errorf("%s panicked %q but %d copies ran", op, want, o.copies)
						}
						refused.Add(1)
						return
					}
					if op == "SetActiveWorkers" {
						continue
					}
					if err := checkPrefixOnce(f, op); err != nil {
						errs <- err
						return
					}
					completed.Add(1)
				}
			}()
		}
		for range delay {
			runtime.Gosched()
		}
		for range closers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if o := callOn(nil, w.Close); o.Value != nil || o.Goexit {
					errs <- fmt.Errorf("Close: panic %#v (goexit=%v)", o.Value, o.Goexit)
				}
			}()
		}
		finishWithin(t, "Close racing runs", wg.Wait)
		close(errs)
		for err := range errs {
			require.NoError(t, err, "rep %d", rep)
		}
		w.Close() // idempotent
		require.Zero(t, stillServing(w.Name()), "worker goroutines still in Serve after Close returned")
	}
	t.Logf("%d sets: %d runs completed, %d refused with \"set is closed\"", reps, completed.Load(), refused.Load())
	require.Positive(t, refused.Load())
}

// checkPrefixOnce checks that a completed run ran copies 0..k-1 each once and
// nothing else, for some k >= 1 (k = n for RunN).
func checkPrefixOnce(f *faultTask, op string) error {
	k := 0
	for id := range f.ran {
		switch c := f.ran[id].Load(); {
		case c > 1:
			return fmt.Errorf("%s: copy %d ran %d times", op, id, c)
		case c == 1 && k != id:
			return fmt.Errorf("%s: copy %d ran but copy %d did not", op, id, k)
		case c == 1:
			k++
		}
	}
	if k == 0 || op != "Run" && k != len(f.ran) {
		return fmt.Errorf("%s: %d of %d copies ran", op, k, len(f.ran))
	}
	return nil
}

// TestFaultManySets creates and closes hundreds of sets, from several
// goroutines at once, with runs (some panicking, some with Goexit on a
// worker) in between; afterwards the goroutine count is back to its baseline.
func TestFaultManySets(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	before := runtime.NumGoroutine()
	sets := 800
	if race.Enabled || testing.Short() {
		sets = 200
	}
	const makers = 4
	var wg sync.WaitGroup
	errs := make(chan error, makers)
	var created atomic.Int64
	for m := range makers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range sets / makers {
				max := 1 + (i+m)%8
				var opts []workers.Option
				if i%3 == 0 {
					opts = append(opts, workers.WithSpin(0))
				}
				w := workers.New(fmt.Sprintf("many-%d-%d", m, i), max, opts...)
				for r := range 3 {
					n := 1 + (i+r)%max
					f := newFaultTask(n, r == 1, r == 2, func(id int, onC bool) bool { return !onC && id == (i+r)%n && (i+r)%4 == 0 })
					o := f.run(w, n)
					if o.Goexit {
						errs <- fmt.Errorf("set %d run %d: the caller exited", i, r)
						return
					}
					for id := range f.ran {
						if c := f.ran[id].Load(); c != 1 {
							errs <- fmt.Errorf("set %d run %d: copy %d ran %d times", i, r, id, c)
							return
						}
					}
					if _, ok := o.Value.(*workers.PanicError); o.Value != nil && !ok {
						errs <- fmt.Errorf("set %d run %d: panic %#v", i, r, o.Value)
						return
					}
				}
				created.Add(int64(w.CreatedWorkers()))
				w.Close()
				if i%10 == 0 {
					if k := stillServing(w.Name()); k != 0 {
						errs <- fmt.Errorf("set %q: %d worker goroutines still in Serve after Close returned", w.Name(), k)
						return
					}
				}
			}
		}()
	}
	finishWithin(t, "many sets", wg.Wait)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// Close returns after every worker called wg.Done; the goroutines end a
	// moment later. goleak.VerifyNone (deferred above) waits for them with
	// retries; the count here is only logged.
	t.Logf("%d sets, %d workers created and closed; goroutines before %d, now %d",
		sets, created.Load(), before, runtime.NumGoroutine())
}

// stillServing counts the goroutines of the set named name (by their pprof
// labels) that are inside the dispatcher's Serve. Close returns only after
// every worker called wg.Done, its last act after leaving Serve, so after
// Close this must be zero.
func stillServing(name string) int {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		panic(err)
	}
	label := fmt.Sprintf(`"workgang.set":%q`, name)
	k := 0
	for _, group := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(group, label) && strings.Contains(group, "gang.(*Dispatcher).Serve") {
			var c int
			fmt.Sscanf(group, "%d @", &c)
			k += c
		}
	}
	return k
}

// TestFaultPlacementFailure: a set whose workers cannot be placed (affinity
// to a CPU that does not exist) still runs every copy, through panics and
// Goexit replacements (each replacement is a worker start and tries to place
// itself again), and closes cleanly.
func TestFaultPlacementFailure(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("placement failures are reported only on Linux")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const max = 3
	w := workers.New("misplaced", max, workers.WithAffinity(4095))
	// A barrier task: all copies must be running at once, so every worker
	// has started (and tried to place itself) when the run returns.
	barrier := func() *faultTask {
		var arrived atomic.Int32
		return newFaultTask(max, false, false, func(int, bool) bool {
			arrived.Add(1)
			for arrived.Load() < max {
				runtime.Gosched()
			}
			return false
		})
	}
	run := func(f *faultTask) (o outcome) {
		finishWithin(t, "run on a misplaced set", func() { o = f.run(w, max) })
		f.checkEachOnce(t)
		return o
	}
	require.Nil(t, run(barrier()).Value)
	starts := max
	require.Len(t, w.PlacementErrors(), starts)
	for rep := range 5 {
		o := run(newFaultTask(max, false, true, func(id int, _ bool) bool { return id == rep%max }))
		require.IsType(t, &workers.PanicError{}, o.Value)
		starts++ // the replacement of the worker that exited
		require.Nil(t, run(barrier()).Value)
		require.Len(t, w.PlacementErrors(), starts)
	}
	for _, err := range w.PlacementErrors() {
		require.True(t, strings.HasPrefix(err.Error(), `workers: "misplaced" worker `), err.Error())
	}
	assert.Equal(t, starts, w.Stats().PlacementFailures)
	finishWithin(t, "Close", w.Close)
}

// hostileTask misbehaves in the methods other than Work, at a point chosen
// per run: Name panics, calls runtime.Goexit, blocks for a while or runs a
// nested run on the same set; CallerCanRun panics or re-enters the set; and
// some copies panic.
type hostileTask struct {
	w        *workers.Workers
	name     int // 0 fine, 1 panic, 2 Goexit, 3 block, 4 nested RunN
	caller   int // 0 no, 1 yes, 2 panic, 3 nested RunN then yes
	failMask uint8
	ran      [8]atomic.Int32
}

func (h *hostileTask) Name() string {
	switch h.name {
	case 1:
		panic("hostile Name")
	case 2:
		runtime.Goexit()
	case 3:
		time.Sleep(100 * time.Microsecond)
	case 4:
		h.w.RunN(&hostileTask{w: h.w}, 1) // must panic (nested), never deadlock
	}
	return "hostile"
}

func (h *hostileTask) CallerCanRun() bool {
	switch h.caller {
	case 2:
		panic("hostile CallerCanRun")
	case 3:
		// Asked before the set's lock is taken: a run on the same set from
		// here is an ordinary run, not a nested one.
		h.w.RunN(&hostileTask{w: h.w}, 1)
		return true
	}
	return h.caller == 1
}

func (h *hostileTask) Work(id int) {
	h.ran[id].Add(1)
	if h.failMask>>id&1 != 0 {
		panic(faultBoom{id})
	}
}

// TestFaultHostileMethods: runs of tasks whose Name and CallerCanRun panic,
// call Goexit, block or re-enter the set, with copies that panic, in every
// mode: no run hangs, no copy runs twice or (once the run started) never,
// every failure comes back as a *workers.PanicError, and the set stays
// usable.
func TestFaultHostileMethods(t *testing.T) {
	w := workers.New("fault-hostile", 4)
	defer w.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	reps := faultReps()
	for rep := range reps {
		h := &hostileTask{w: w, name: rng.IntN(5), caller: rng.IntN(4), failMask: uint8(rng.IntN(256))}
		if h.caller != 0 && h.name == 2 {
			// Name may be called on the caller (a caller copy's failure, a
			// CallerCanRun panic): its Goexit then ends the caller, which is
			// what Goexit means (gang's tests cover that case).
			h.name = 0
		}
		n := 1 + rng.IntN(4)
		what := fmt.Sprintf("rep %d: name=%d caller=%d fail=%08b n=%d", rep, h.name, h.caller, h.failMask, n)
		var v any
		finishWithin(t, what, func() {
			v = func() (v any) {
				defer func() { v = recover() }()
				w.RunN(h, n)
				return nil
			}()
		})
		copiesFailed := h.failMask&(1<<n-1) != 0
		switch {
		case h.caller == 2:
			pe, ok := v.(*workers.PanicError)
			require.True(t, ok, "%s: %#v", what, v)
			assert.Equal(t, "CallerCanRun", pe.Method, what)
			for id := range n {
				assert.Zero(t, h.ran[id].Load(), "%s: copy %d ran after CallerCanRun panicked", what, id)
			}
			continue
		case copiesFailed:
			pe, ok := v.(*workers.PanicError)
			require.True(t, ok, "%s: %#v", what, v)
			_, boom := pe.Value.(faultBoom)
			assert.True(t, boom, "%s: PanicError.Value = %#v", what, pe.Value)
		case v != nil:
			// Only Name misbehaved; it is called only to describe a failure
			// (or a trace region), so nothing may be reported.
			t.Fatalf("%s: unexpected panic %#v", what, v)
		}
		for id := range n {
			assert.Equal(t, int32(1), h.ran[id].Load(), "%s: copy %d", what, id)
		}
	}
	checkUsable(t, w)
}

// TestFaultContendedSubmitters: several goroutines share one set, directly
// and from copies nested in runs on sets of their own (plain and inline),
// with copies that panic, and runs with a context cancelled at random while
// they may be waiting for the set. Every run either runs each copy exactly
// once (its failures reported as *workers.PanicError) or, a run with a
// context that ended while it waited, returns the cause having run nothing;
// nothing hangs, nested waiters included, and the set stays usable.
func TestFaultContendedSubmitters(t *testing.T) {
	s := workers.New("fault-contended", 3)
	defer s.Close()
	const submitters = 3
	reps := max(faultReps()/10, 10)
	errCause := errors.New("fault: request gone")
	var mu sync.Mutex
	var problems []string
	report := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var cancelled atomic.Int64
	finishWithin(t, "contended submitters", func() {
		var wg sync.WaitGroup
		for g := range submitters {
			own := workers.New(fmt.Sprintf("fault-contended-own-%d", g), 1)
			defer own.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(g), 17))
				for rep := range reps {
					n := 1 + rng.IntN(3)
					nested, inlineOuter := rng.IntN(2) == 1, rng.IntN(2) == 1
					// on runs f on s, from this goroutine or from a copy
					// of a run on own.
					on := func(f func()) {
						if !nested {
							f()
							return
						}
						task := tasks.Func("outer", func(int) { f() })
						if inlineOuter {
							task = tasks.CallerRuns(task)
						}
						own.RunN(task, 1)
					}
					what := fmt.Sprintf("submitter %d rep %d: n=%d nested=%v inline=%v", g, rep, n, nested, inlineOuter)
					if rng.IntN(3) == 0 {
						ctx, cancel := context.WithCancelCause(context.Background())
						delay := time.Duration(rng.IntN(100)) * time.Microsecond
						stop := time.AfterFunc(delay, func() { cancel(errCause) })
						var ran atomic.Int32
						var err error
						on(func() {
							err = s.RunContext(ctx, n, func(context.Context, int) error { ran.Add(1); return nil })
						})
						stop.Stop()
						cancel(nil)
						switch {
						case err == errCause && ran.Load() == 0:
							cancelled.Add(1)
						case err == nil && int(ran.Load()) == n:
						default:
							report("%s: RunContext returned %v after %d of %d copies", what, err, ran.Load(), n)
						}
						continue
					}
					mask := rng.IntN(1 << n)
					f := newFaultTask(n, rng.IntN(2) == 1, false, func(id int, _ bool) bool { return mask>>id&1 != 0 })
					var v any
					on(func() {
						defer func() { v = recover() }()
						f.callerG = goid.Get()
						s.RunN(f, n)
					})
					for id := range f.ran {
						if r := f.ran[id].Load(); r != 1 {
							report("%s: copy %d ran %d times", what, id, r)
						}
					}
					pe, isPE := v.(*workers.PanicError)
					switch {
					case mask == 0 && v != nil:
						report("%s: unexpected panic %v", what, v)
					case mask != 0 && (!isPE || !errors.Is(pe, errFault)):
						report("%s: failing copies %b reported as %#v", what, mask, v)
					}
				}
			}()
		}
		wg.Wait()
	})
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d submitters x %d runs: %d runs waited for the set, %d cancelled while waiting", submitters, reps, s.Stats().Waits, cancelled.Load())
	checkUsable(t, s)
}
