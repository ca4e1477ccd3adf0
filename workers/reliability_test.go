package workers_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// Regression tests for hostile tasks, cross-set cycles and promises the docs
// make. Each failed on an earlier dispatcher.

// within runs f on a new goroutine and fails the test if it does not return
// within d (a hang would otherwise only show as the package's timeout).
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not return within %v (hang)", d)
	}
}

// panicValue runs f and returns what it panicked with (nil if nothing).
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// nestedMessage digs the innermost "workers: ..." message out of a panic
// that may have been wrapped in PanicErrors by each level of nesting.
func nestedMessage(v any) string {
	for {
		pe, ok := v.(*workers.PanicError)
		if !ok {
			return fmt.Sprint(v)
		}
		v = pe.Value
	}
}

// TestCycleAcrossSetsPanics: A's copy runs on B, whose copy runs on A. That
// can never finish; it must panic with a message naming the sets, for plain
// and caller-runs runs, and for a three-set cycle.
func TestCycleAcrossSetsPanics(t *testing.T) {
	for _, caller := range []bool{false, true} {
		for _, k := range []int{2, 3} {
			t.Run(fmt.Sprintf("caller=%v/sets=%d", caller, k), func(t *testing.T) {
				sets := make([]*workers.Workers, k)
				for i := range sets {
					sets[i] = workers.New(fmt.Sprintf("cyc%d", i), 2)
					defer sets[i].Close()
				}
				wrap := func(t tasks.Task) tasks.Task {
					if caller {
						return tasks.CallerRuns(t)
					}
					return t
				}
				// level i runs on set i and starts level i+1 on set (i+1)%k;
				// level k tries set 0 again, which is held: the cycle.
				// Both copies of a level meet at a barrier, so one of them
				// runs on a worker even with caller-runs, and that one nests:
				// the chain then goes through other sets' workers, never
				// back to a goroutine of set 0's own run.
				var level func(i int) tasks.Task
				level = func(i int) tasks.Task {
					var arrived atomic.Int32
					caller := goid.Get()
					return wrap(tasks.Func(fmt.Sprintf("level%d", i), func(id int) {
						arrived.Add(1)
						for arrived.Load() < 2 {
							runtime.Gosched()
						}
						if goid.Get() == caller || id != 0 {
							return
						}
						sets[(i+1)%k].RunN(level(i+1), 2)
					}))
				}
				var v any
				within(t, 30*time.Second, func() { v = panicValue(func() { sets[0].RunN(level(0), 2) }) })
				require.NotNil(t, v, "the cycle did not panic")
				msg := nestedMessage(v)
				assert.Contains(t, msg, `workers: RunN on "cyc0" called from inside a copy of a run that waits for it`)
				for i := range k {
					assert.Contains(t, msg, fmt.Sprintf("%q", fmt.Sprintf("cyc%d", i)), "the message names every set of the cycle")
				}
				// All sets stay usable.
				for _, s := range sets {
					s.RunN(tasks.Func("after", func(int) {}), 2)
				}
			})
		}
	}
}

// TestNestedRunOnOtherSetWithoutCycle: nesting across sets without a cycle
// works, also when the other set is busy with an unrelated run (the cycle
// check must not fire on plain contention).
func TestNestedRunOnOtherSetWithoutCycle(t *testing.T) {
	a := workers.New("outer-a", 2)
	defer a.Close()
	b := workers.New("inner-b", 2)
	defer b.Close()
	release := make(chan struct{})
	started := make(chan struct{})
	go b.RunN(tasks.Func("busy", func(id int) {
		if id == 0 {
			close(started)
		}
		<-release
	}), 2)
	<-started
	var inner atomic.Int32
	go func() {
		time.Sleep(20 * time.Millisecond) // let a's copies block on b
		close(release)
	}()
	within(t, 30*time.Second, func() {
		a.RunN(tasks.Func("nest", func(int) {
			b.RunN(tasks.Func("inner", func(int) { inner.Add(1) }), 2)
		}), 2)
	})
	assert.Equal(t, int32(4), inner.Load())
}

// TestInlineRunsNeverOverlap: inline runs (caller-runs, n == 1) take the run
// lock like every run, so copy 0 of two runs never executes at once.
func TestInlineRunsNeverOverlap(t *testing.T) {
	w := workers.New("inline-serial", 2)
	defer w.Close()
	var in atomic.Int32
	var overlaps atomic.Int32
	task := tasks.CallerRuns(tasks.Func("scratch0", func(int) {
		if in.Add(1) != 1 {
			overlaps.Add(1)
		}
		for range 100 {
			runtime.Gosched()
		}
		in.Add(-1)
	}))
	plain := tasks.Func("plain", func(int) {
		if in.Add(1) != 1 {
			overlaps.Add(1)
		}
		runtime.Gosched()
		in.Add(-1)
	})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if g == 0 {
					w.RunN(plain, 1)
				} else {
					w.RunN(task, 1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, overlaps.Load(), "runs overlapped")
}

// TestCloseFromInlineCopyPanics: as documented, Close from inside a task of
// the set panics, inline copies included, and the set stays open.
func TestCloseFromInlineCopyPanics(t *testing.T) {
	w := workers.New("close-inline", 2)
	defer w.Close()
	v := panicValue(func() { w.RunN(tasks.CallerRuns(tasks.Func("closer", func(int) { w.Close() })), 1) })
	require.IsType(t, &workers.PanicError{}, v)
	assert.Contains(t, nestedMessage(v), `workers: Close on "close-inline" called from inside`)
	w.RunN(tasks.Func("still-open", func(int) {}), 2)
}

type nilTask struct{ n int }

func (t *nilTask) Name() string { return fmt.Sprintf("nil-task-%d", t.n) } // panics for a nil *nilTask
func (t *nilTask) Work(int)     { t.n++ }                                  // so does this

// TestTypedNilTask: a typed-nil task pointer panics in Name and in Work; on
// workers, on the caller and inline alike the panic comes back as a
// *PanicError, the process survives and the set stays usable.
func TestTypedNilTask(t *testing.T) {
	w := workers.New("typed-nil", 3)
	defer w.Close()
	var bad *nilTask
	for _, tc := range []struct {
		name string
		task tasks.Task
		n    int
	}{{"workers", bad, 3}, {"caller", tasks.CallerRuns(bad), 3}, {"inline", tasks.CallerRuns(bad), 1}} {
		var v any
		within(t, 30*time.Second, func() { v = panicValue(func() { w.RunN(tc.task, tc.n) }) })
		require.IsType(t, &workers.PanicError{}, v, tc.name)
		pe := v.(*workers.PanicError)
		assert.Contains(t, pe.Task, "<Name panicked: runtime error: invalid memory address", tc.name)
		assert.Contains(t, fmt.Sprint(pe.Value), "invalid memory address", tc.name)
		w.RunN(tasks.Func("after", func(int) {}), 3)
	}
}

type capturing struct{ big []byte }

func (*capturing) Name() string { return "capturing" }
func (*capturing) Work(int)     {}

// TestFinishedTaskNotRetained: after RunN returns, nothing of the task stays
// reachable from the set (64 MiB captured by a task once survived the run).
func TestFinishedTaskNotRetained(t *testing.T) {
	w := workers.New("retain", 2)
	defer w.Close()
	for _, mode := range []string{"workers", "caller", "inline"} {
		collected := make(chan struct{})
		func() {
			c := &capturing{big: make([]byte, 8<<20)}
			runtime.SetFinalizer(c, func(*capturing) { close(collected) })
			switch mode {
			case "workers":
				w.RunN(c, 2)
			case "caller":
				w.RunN(tasks.CallerRuns(c), 2)
			default:
				w.RunN(tasks.CallerRuns(c), 1)
			}
		}()
		ok := false
		for range 100 {
			runtime.GC()
			select {
			case <-collected:
				ok = true
			case <-time.After(5 * time.Millisecond):
			}
			if ok {
				break
			}
		}
		assert.True(t, ok, "%s: the finished task is still reachable", mode)
	}
}

// TestPlacementErrorsCompleteAfterFirstRun: a worker applies its placement
// before the run that created it returns, so PlacementErrors is complete
// right after it (it once was not, at GOMAXPROCS = 1).
func TestPlacementErrorsCompleteAfterFirstRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("affinity is Linux-only")
	}
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	for range 20 {
		w := workers.New("placed-late", 2, workers.WithAffinity(4095))
		w.RunN(tasks.CallerRuns(tasks.Func("x", func(int) {})), 2) // the caller may run both copies
		assert.Len(t, w.PlacementErrors(), 1, "right after the run that created worker 0")
		w.Close()
	}
}

// TestNoFalseCycleThroughOuterCaller: a caller-runs run on Y whose caller
// copy runs a long plain run on X, while Y's worker copy waits for X. X's run
// depends on nobody in Y, so this is contention, not a cycle (a review found
// the first cycle check panicking here: it took "holds Y" for "waits for Y").
func TestNoFalseCycleThroughOuterCaller(t *testing.T) {
	for _, innerCaller := range []bool{false, true} {
		x := workers.New("X", 2)
		y := workers.New("Y", 2)
		xStarted := make(chan struct{})
		var v any
		within(t, 30*time.Second, func() {
			caller := goid.Get()
			v = panicValue(func() {
				y.RunN(tasks.CallerRuns(tasks.Func("outer", func(int) {
					if goid.Get() == caller {
						var long tasks.Task = tasks.Func("long", func(id int) {
							if id == 0 {
								close(xStarted)
							}
							time.Sleep(50 * time.Millisecond)
						})
						if innerCaller {
							long = tasks.CallerRuns(long)
						}
						x.RunN(long, 2)
						return
					}
					<-xStarted
					x.RunN(tasks.Func("inner", func(int) {}), 1)
				})), 2)
			})
		})
		assert.Nil(t, v, "innerCaller=%v: no deadlock exists, yet: %v", innerCaller, nestedMessage(v))
		x.Close()
		y.Close()
	}
}

// TestCycleWithTwoRoutesIsFound: a cycle reachable through two routes of
// the same length is still reported (the first check compared the path it
// found twice, and the search order varies).
func TestCycleWithTwoRoutesIsFound(t *testing.T) {
	for trial := range 3 {
		a := workers.New(fmt.Sprintf("A%d", trial), 1)
		y1 := workers.New(fmt.Sprintf("Y1-%d", trial), 2)
		y2 := workers.New(fmt.Sprintf("Y2-%d", trial), 2)
		z := workers.New(fmt.Sprintf("Z%d", trial), 1)
		nop := tasks.Func("nop", func(int) {})
		meet := func() func() {
			var n atomic.Int32
			return func() {
				n.Add(1)
				for n.Load() < 2 {
					runtime.Gosched()
				}
			}
		}
		m1, m2 := meet(), meet() // copy 0 runs on a worker, not the caller
		res := make(chan any, 2)
		go func() {
			res <- panicValue(func() {
				z.RunN(tasks.Func("z", func(int) { time.Sleep(200 * time.Millisecond); a.RunN(nop, 1) }), 1)
			})
		}()
		time.Sleep(20 * time.Millisecond)
		go func() {
			res <- panicValue(func() {
				a.RunN(tasks.CallerRuns(tasks.Func("a", func(int) {
					y1.RunN(tasks.CallerRuns(tasks.Func("y1", func(id int) {
						m1()
						if id == 0 {
							z.RunN(nop, 1)
							return
						}
						y2.RunN(tasks.CallerRuns(tasks.Func("y2", func(id int) {
							m2()
							if id == 0 {
								z.RunN(nop, 1)
							}
						})), 2)
					})), 2)
				})), 1)
			})
		}()
		select {
		case v := <-res:
			assert.Contains(t, nestedMessage(v), "the runs would deadlock", "trial %d", trial)
		case <-time.After(20 * time.Second):
			t.Fatalf("trial %d: a real cycle hung instead of panicking", trial)
		}
		<-res // the other side ends once the panic unwound the cycle
		for _, s := range []*workers.Workers{a, y1, y2, z} {
			s.Close()
		}
	}
}
