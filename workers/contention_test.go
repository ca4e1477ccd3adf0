package workers_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/workgang/workgang/internal/testutil"
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
			testutil.Within(t, "the runs", 20*time.Second, func() {
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
	testutil.Within(t, "the runs", 20*time.Second, wg.Wait)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, order)
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
