package workers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// Cycles, nested releases, nested waiters under contention, waits with a
// context, and the promises of WithSpin, tracing and Stats.

// waitUntil polls cond until it holds, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// cycleRunner is one way to start a single-copy run that runs on its caller:
// each must take part in the cycle check on a set that has no workers.
type cycleRunner struct {
	name string
	run  func(w *workers.Workers, body func())
}

var cycleRunners = []cycleRunner{
	{"RunN CallerRuns n=1", func(w *workers.Workers, body func()) {
		w.RunN(tasks.CallerRuns(tasks.Func("cyc", func(int) { body() })), 1)
	}},
	{"RunContext n=1", func(w *workers.Workers, body func()) {
		_ = w.RunContext(context.Background(), 1, func(context.Context, int) error { body(); return nil })
	}},
	{"ForRange one chunk caller-runs", func(w *workers.Workers, body func()) {
		w.ForRange(1, func(int, int, int) { body() }) // caller-runs by default
	}},
	{"ForRangeContext one chunk caller-runs", func(w *workers.Workers, body func()) {
		_ = w.ForRangeContext(context.Background(), 1, func(context.Context, int, int, int) error { body(); return nil })
	}},
}

// TestCycleThroughWorkerlessSetsPanics: X holds S (an inline run) and its
// copy runs on A; Y holds A and its copy runs on S. Neither set ever created
// a worker. The programs must panic naming both sets, never hang.
func TestCycleThroughWorkerlessSetsPanics(t *testing.T) {
	for _, r := range cycleRunners {
		t.Run(r.name, func(t *testing.T) {
			// Closed at the end, not deferred: after a hang, Close would
			// wait for the hung runs and hide the failure.
			s, a := workers.New("cyc-S", 2), workers.New("cyc-A", 2)
			var inS, inA sync.WaitGroup
			inS.Add(1)
			inA.Add(1)
			var vx, vy any
			within(t, 20*time.Second, func() {
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { // X
					defer wg.Done()
					vx = panicValue(func() {
						r.run(s, func() {
							inS.Done()
							inA.Wait()
							r.run(a, func() {})
						})
					})
				}()
				go func() { // Y
					defer wg.Done()
					vy = panicValue(func() {
						r.run(a, func() {
							inA.Done()
							inS.Wait()
							r.run(s, func() {})
						})
					})
				}()
				wg.Wait()
			})
			require.True(t, vx != nil || vy != nil, "neither run panicked")
			for _, v := range []any{vx, vy} {
				if v == nil {
					continue // the other one panicked first; this one then ran
				}
				msg := nestedMessage(v)
				assert.Contains(t, msg, "would deadlock", msg)
				assert.Contains(t, msg, `"cyc-S"`, msg)
				assert.Contains(t, msg, `"cyc-A"`, msg)
			}
			assert.Zero(t, s.CreatedWorkers()+a.CreatedWorkers(), "the programs need no worker")
			checkUsable(t, s)
			checkUsable(t, a)
			s.Close()
			a.Close()
		})
	}
}

// checkUsable runs a plain and an inline run on w.
func checkUsable(t *testing.T, w *workers.Workers) {
	t.Helper()
	p := newProbe(2, false)
	w.RunN(p, 2)
	p.check(t, 0)
	q := newProbe(1, true)
	w.RunN(q, 1)
	assert.Equal(t, int32(1), q.runs[0].Load())
}

// TestNestedLastReleasePanicsConsumingNothing: the last release of a shared
// set B from a copy nested in B's run (directly, through a plain run on
// another set, through an inline run on a set without workers) panics
// before anything changes: the name stays registered, B stays usable, the
// same release function closes it later.
func TestNestedLastReleasePanicsConsumingNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(b *workers.Shared, a *workers.Workers, rel func())
	}{
		{"direct", func(b *workers.Shared, _ *workers.Workers, rel func()) {
			b.RunN(tasks.Func("rel", func(int) { rel() }), 1)
		}},
		{"through a plain run", func(b *workers.Shared, a *workers.Workers, rel func()) {
			b.RunN(tasks.Func("outer", func(int) {
				a.RunN(tasks.Func("inner", func(int) { rel() }), 1)
			}), 1)
		}},
		{"through an inline run", func(b *workers.Shared, a *workers.Workers, rel func()) {
			b.RunN(tasks.Func("outer", func(int) {
				a.RunN(tasks.CallerRuns(tasks.Func("inner", func(int) { rel() })), 1)
			}), 1)
		}},
		{"through two sets", func(b *workers.Shared, a *workers.Workers, rel func()) {
			c := workers.New("rel-C", 1)
			defer c.Close()
			b.RunN(tasks.Func("outer", func(int) {
				a.RunN(tasks.Func("middle", func(int) {
					c.RunN(tasks.CallerRuns(tasks.Func("inner", func(int) { rel() })), 1)
				}), 1)
			}), 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := workers.SharedSets()
			b, relB := workers.Acquire("rel-B", 2)
			a := workers.New("rel-A", 1)
			defer a.Close()
			var v any
			within(t, 20*time.Second, func() { v = panicValue(func() { tc.run(b, a, relB) }) })
			msg := nestedMessage(v)
			assert.Equal(t, `workers: last release of shared set "rel-B" called from inside one of its own copies (directly or through nested runs on other sets): it would close the set during its own run; release it after the run`, msg)
			assert.Equal(t, before+1, workers.SharedSets(), "the name stays registered")
			b2, relB2 := workers.Acquire("rel-B", 2)
			assert.Same(t, b, b2, "Acquire finds the same set")
			relB2()
			p := newProbe(2, false)
			b.RunN(p, 2) // still open and usable
			p.check(t, 0)
			relB() // not consumed: closes now
			assert.Equal(t, before, workers.SharedSets())
			assert.Panics(t, func() { b.RunN(p, 2) }, "closed")
		})
	}
}

// TestLastReleaseInsideLockFreeRunCloses: a shared set has concurrent runs,
// and a run of one caller-runs copy there takes no lock and uses no worker:
// a last release from inside it closes the set, as Close would.
func TestLastReleaseInsideLockFreeRunCloses(t *testing.T) {
	before := workers.SharedSets()
	b, relB := workers.Acquire("rel-lock-free", 2)
	within(t, 20*time.Second, func() {
		b.RunN(tasks.CallerRuns(tasks.Func("rel", func(int) { relB() })), 1)
	})
	assert.Equal(t, before, workers.SharedSets())
	assert.Panics(t, func() { b.RunN(newProbe(1, false), 1) }, "closed")
}

// TestNestedReleaseOfOtherSetAllowed: the last release of a set from a copy
// of another set's run, while the released set runs nothing, is not nested
// and closes it.
func TestNestedReleaseOfOtherSetAllowed(t *testing.T) {
	before := workers.SharedSets()
	_, relB := workers.Acquire("rel-other", 2)
	a := workers.New("rel-other-A", 2)
	defer a.Close()
	a.RunN(tasks.Func("rel", func(id int) {
		if id == 0 {
			relB()
		}
	}), 2)
	assert.Equal(t, before, workers.SharedSets())
}

// TestNestedWaiterNotStarved: two goroutines keep re-running on B; a copy on
// another set then runs on B. It must take its place in B's line like any
// caller: FIFO lets at most the loopers' runs already holding or queued go
// first (a few, with slack for a loaded machine), not thousands.
func TestNestedWaiterNotStarved(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			b := workers.New("starve-B", 2)
			defer b.Close()
			a := workers.New("starve-A", 1)
			defer a.Close()
			var loopRuns atomic.Int64
			stop := make(chan struct{})
			var loopers sync.WaitGroup
			for range 2 {
				loopers.Add(1)
				go func() {
					defer loopers.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						b.RunN(tasks.Func("loop", func(int) {
							loopRuns.Add(1)
							time.Sleep(200 * time.Microsecond)
						}), 1)
					}
				}()
			}
			defer func() {
				close(stop)
				loopers.Wait()
			}()
			waitUntil(t, 10*time.Second, "loopers running", func() bool { return loopRuns.Load() > 10 })
			var ahead int64
			inner := tasks.Func("nested", func(int) { ahead = loopRuns.Load() })
			if inline {
				inner = tasks.CallerRuns(inner)
			}
			within(t, 20*time.Second, func() {
				a.RunN(tasks.Func("outer", func(int) {
					start := loopRuns.Load()
					b.RunN(inner, 1)
					ahead -= start
				}), 1)
			})
			assert.LessOrEqual(t, ahead, int64(20), "loopers' runs that went before the nested waiter")
		})
	}
}

// TestRunContextCancelledWhileWaiting: a run with a context that waits for a
// busy set returns the context's cause as soon as the context is done, runs
// nothing, and is counted in Stats' waits; the set stays usable. Also from a
// nested caller (inside a copy on another set).
func TestRunContextCancelledWhileWaiting(t *testing.T) {
	cause := errors.New("request gone")
	calls := []struct {
		name string
		call func(w *workers.Workers, ctx context.Context, ran *atomic.Int32) error
	}{
		{"RunContext n=1", func(w *workers.Workers, ctx context.Context, ran *atomic.Int32) error {
			return w.RunContext(ctx, 1, func(context.Context, int) error { ran.Add(1); return nil })
		}},
		{"RunContext n=2", func(w *workers.Workers, ctx context.Context, ran *atomic.Int32) error {
			return w.RunContext(ctx, 2, func(context.Context, int) error { ran.Add(1); return nil })
		}},
		{"ForRangeContext workers only", func(w *workers.Workers, ctx context.Context, ran *atomic.Int32) error {
			return w.ForRangeContext(ctx, 100, func(context.Context, int, int, int) error { ran.Add(1); return nil },
				workers.WithWorkersOnly())
		}},
		{"ForRangeContext caller-runs", func(w *workers.Workers, ctx context.Context, ran *atomic.Int32) error {
			return w.ForRangeContext(ctx, 100, func(context.Context, int, int, int) error { ran.Add(1); return nil })
		}},
	}
	for _, nested := range []bool{false, true} {
		for _, c := range calls {
			t.Run(fmt.Sprintf("%s/nested=%v", c.name, nested), func(t *testing.T) {
				w := workers.New("ctx-wait", 2)
				defer w.Close()
				other := workers.New("ctx-wait-other", 1)
				defer other.Close()
				release := make(chan struct{})
				var once sync.Once
				unblock := func() { once.Do(func() { close(release) }) }
				defer unblock() // before Close, also when the test fails
				holding := make(chan struct{})
				held := make(chan struct{})
				go func() {
					defer close(held)
					w.RunN(tasks.Func("hold", func(int) {
						close(holding)
						<-release
					}), 1)
				}()
				<-holding
				before := w.Stats()
				ctx, cancel := context.WithCancelCause(context.Background())
				var ran atomic.Int32
				errc := make(chan error, 1)
				call := func() { errc <- c.call(w, ctx, &ran) }
				if nested {
					go other.RunN(tasks.Func("outer", func(int) { call() }), 1)
				} else {
					go call()
				}
				waitUntil(t, 10*time.Second, "the run waits in line", func() bool { return workers.Queued(w) == 1 })
				cancel(cause)
				var err error
				select {
				case err = <-errc:
				case <-time.After(10 * time.Second):
					t.Fatal("the waiting run did not return after its context was cancelled")
				}
				assert.Same(t, cause, err)
				assert.Zero(t, ran.Load(), "nothing may run")
				assert.Zero(t, workers.Queued(w), "the waiter left the line")
				st := w.Stats()
				assert.Equal(t, before.Waits+1, st.Waits, "the wait is counted")
				assert.Greater(t, st.WaitTime, before.WaitTime)
				assert.Equal(t, before.Runs, st.Runs, "no run started")
				unblock() // the set was busy all along
				<-held
				checkUsable(t, w)
			})
		}
	}
}

// TestStatsCountWaits: runs that find the set busy wait in line and are
// counted once each, with their time; runs that find it free are not.
func TestStatsCountWaits(t *testing.T) {
	w := workers.New("stats-waits", 2)
	defer w.Close()
	w.RunN(newProbe(2, false), 2)
	assert.Zero(t, w.Stats().Waits, "an uncontended run does not wait")
	var wg sync.WaitGroup
	unblock := holdSet(w, 1)
	defer unblock() // before Close, also when the test fails
	const waiters = 3
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.RunN(tasks.CallerRuns(tasks.Func("wait", func(int) {})), 1)
		}()
	}
	waitUntil(t, 10*time.Second, "waiters in line", func() bool { return workers.Queued(w) == waiters })
	pause := 2 * time.Millisecond
	time.Sleep(pause)
	unblock()
	wg.Wait()
	st := w.Stats()
	assert.Equal(t, uint64(waiters), st.Waits, "%v", st)
	assert.GreaterOrEqual(t, st.WaitTime, waiters*pause, "%v", st)
	assert.Contains(t, st.String(), fmt.Sprintf("waits=%d", waiters))
}

// TestWaitersServedInOrder: runs that queue for a busy set get it in the
// order they queued, nested ones included.
func TestWaitersServedInOrder(t *testing.T) {
	w := workers.New("fifo", 2)
	defer w.Close()
	var wg sync.WaitGroup
	unblock := holdSet(w, 1)
	defer unblock() // before Close, also when the test fails
	var mu sync.Mutex
	var order []int
	const k = 6
	for i := range k {
		run := func() {
			w.RunN(tasks.CallerRuns(tasks.Func("q", func(int) {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
			})), 1)
		}
		wg.Add(1)
		if i%2 == 1 { // nested: from a copy on another set
			other := workers.New(fmt.Sprintf("fifo-other-%d", i), 1)
			defer other.Close()
			go func() {
				defer wg.Done()
				other.RunN(tasks.CallerRuns(tasks.Func("outer", func(int) { run() })), 1)
			}()
		} else {
			go func() { defer wg.Done(); run() }()
		}
		waitUntil(t, 10*time.Second, "queued", func() bool { return workers.Queued(w) == i+1 })
	}
	unblock()
	within(t, 20*time.Second, wg.Wait)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, order)
}

// TestWithSpinSetsEndWait: with WithSpin, the coordinator polls for the end
// of the run for the set's budget when the run's workers and the coordinator
// fit in GOMAXPROCS, and parks soon when they outnumber it.
func TestWithSpinSetsEndWait(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("needs GOMAXPROCS >= 2: with one processor every budget is 0")
	}
	w := workers.New("spin-end", procs, workers.WithSpin(time.Minute))
	defer w.Close()
	for rep := range 5 {
		var parked atomic.Bool
		w.RunN(tasks.Func("sleep", func(int) {
			time.Sleep(3 * time.Millisecond)
			parked.Store(workers.CoordinatorParked(w))
		}), 1)
		assert.False(t, parked.Load(), "rep %d: the coordinator parked within 3 ms with a one-minute budget", rep)
	}
	// procs workers and the coordinator outnumber GOMAXPROCS: the budget
	// is cut, so the coordinator parks while the copies still run.
	var parked atomic.Bool
	w.RunN(tasks.Func("wait-park", func(id int) {
		if id == 0 {
			deadline := time.Now().Add(10 * time.Second)
			for !workers.CoordinatorParked(w) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
			parked.Store(workers.CoordinatorParked(w))
		}
	}), procs)
	assert.True(t, parked.Load(), "oversubscribed: the coordinator should park")
}

// nameBomb is a task whose Name panics from its fail-th call on (0: every
// call); Work counts the copies.
type nameBomb struct {
	caller bool
	fail   int32
	calls  atomic.Int32
	ran    [4]atomic.Int32
}

func (b *nameBomb) Name() string {
	if c := b.calls.Add(1); b.fail == 0 || c >= b.fail {
		panic("name bomb")
	}
	return "name-bomb"
}
func (b *nameBomb) CallerCanRun() bool { return b.caller }
func (b *nameBomb) Work(id int)        { b.ran[id].Add(1) }

// TestNamePanicWithTracing: with runtime/trace on, the regions call Name on
// every run; a panic there is reported as *PanicError (before anything runs
// if the run's own region fails, as the copy's failure if a copy's region
// fails), and the counts stay right.
func TestNamePanicWithTracing(t *testing.T) {
	require.NoError(t, trace.Start(io.Discard))
	defer trace.Stop()
	w := workers.New("trace-name", 2)
	defer w.Close()
	for _, tc := range []struct {
		caller bool
		n      int
	}{{false, 2}, {true, 2}, {true, 1}} {
		what := fmt.Sprintf("caller=%v n=%d", tc.caller, tc.n)
		before := w.Stats()
		b := &nameBomb{caller: tc.caller}
		pe := capturePanic(t, func() { w.RunN(b, tc.n) })
		assert.Equal(t, "Name", pe.Method, what)
		assert.Equal(t, "name bomb", pe.Value, what)
		for id := range tc.n {
			assert.Zero(t, b.ran[id].Load(), "%s: copy %d ran", what, id)
		}
		after := w.Stats()
		assert.Equal(t, before.Runs, after.Runs, what)
		assert.Equal(t, before.CallerCopies+before.WorkerCopies, after.CallerCopies+after.WorkerCopies, what)

		if tc.n == 1 {
			continue // one region only
		}
		// The run's region is fine, a copy's is not: that copy fails, every
		// copy still runs once.
		b = &nameBomb{caller: tc.caller, fail: 2}
		pe = capturePanic(t, func() { w.RunN(b, tc.n) })
		assert.Equal(t, "name bomb", pe.Value, what)
		for id := range tc.n {
			assert.Equal(t, int32(1), b.ran[id].Load(), "%s: copy %d", what, id)
		}
		after2 := w.Stats()
		assert.Equal(t, after.Runs+1, after2.Runs, what)
		assert.Equal(t, after.CallerCopies+after.WorkerCopies+uint64(tc.n), after2.CallerCopies+after2.WorkerCopies, what)
	}
	checkUsable(t, w)
}

// TestNamePanicWithoutTracing: with tracing off Name is called only to
// describe a failure, so a run whose Name panics and whose copies are fine
// returns normally.
func TestNamePanicWithoutTracing(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("tracing is on")
	}
	w := workers.New("no-trace-name", 2)
	defer w.Close()
	for _, n := range []int{1, 2} {
		b := &nameBomb{caller: true}
		w.RunN(b, n)
		for id := range n {
			assert.Equal(t, int32(1), b.ran[id].Load())
		}
	}
}

// TestStatsGoexitOnCallerNotCounted: a caller copy whose caller calls
// runtime.Goexit is not counted, inline runs included; the run is.
func TestStatsGoexitOnCallerNotCounted(t *testing.T) {
	for _, n := range []int{1, 2} {
		w := workers.New("goexit-stats", 2)
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.RunN(tasks.CallerRuns(tasks.Func("exit", func(id int) {
				if id == n-1 { // the caller's copy
					runtime.Goexit()
				}
			})), n)
		}()
		<-done
		st := w.Stats()
		w.Close()
		assert.Equal(t, uint64(1), st.Runs, "n=%d: %v", n, st)
		wantInline := uint64(0)
		if n == 1 {
			wantInline = 1
		}
		assert.Equal(t, wantInline, st.InlineRuns, "n=%d: %v", n, st)
		assert.Zero(t, st.CallerCopies, "n=%d: %v", n, st)
		assert.Equal(t, uint64(n-1), st.WorkerCopies, "n=%d: %v", n, st)
	}
}
