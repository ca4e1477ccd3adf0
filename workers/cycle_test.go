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
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// TestCycleAcrossSetsPanics: A's copy runs on B, whose copy runs on A. That
// can never finish; it must panic with a message naming the sets, for plain
// and caller-runs runs, and for a three-set cycle.
func TestCycleAcrossSetsPanics(t *testing.T) {
	for _, caller := range []bool{false, true} {
		for _, k := range []int{2, 3} {
			t.Run(fmt.Sprintf("caller=%v/sets=%d", caller, k), func(t *testing.T) {
				if !caller && !goid.Fast {
					t.Skip("the holders of plain runs are identified only where goid.Get is cheap (amd64, arm64): elsewhere a cycle through them hangs undetected, as token's doc says")
				}
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
				testutil.Within(t, "the runs", 30*time.Second, func() { v = panicValue(func() { sets[0].RunN(level(0), 2) }) })
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
	testutil.Within(t, "the runs", 30*time.Second, func() {
		a.RunN(tasks.Func("nest", func(int) {
			b.RunN(tasks.Func("inner", func(int) { inner.Add(1) }), 2)
		}), 2)
	})
	assert.Equal(t, int32(4), inner.Load())
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
		testutil.Within(t, "the runs", 30*time.Second, func() {
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
		// Take both results. Z's copy closes both cycles; a waiter on Z
		// closes only the one through its own route. Whichever confirms
		// first panics: Z's copy first breaks both cycles, so the other side
		// then finishes with nil (and may report before Z's caller, which
		// frees Z before it re-raises); a waiter on Z first breaks one
		// route, and Z's copy then panics too. Either way at least one side
		// reports the deadlock, and no side fails for another reason.
		var got []any
		for range 2 {
			select {
			case v := <-res:
				got = append(got, v)
			case <-time.After(20 * time.Second):
				t.Fatalf("trial %d: a real cycle hung instead of panicking (results so far: %v)", trial, got)
			}
		}
		deadlocks := 0
		for _, v := range got {
			if v == nil {
				continue
			}
			assert.Contains(t, nestedMessage(v), "the runs would deadlock", "trial %d", trial)
			deadlocks++
		}
		assert.Positive(t, deadlocks, "trial %d: no side reported the cycle: %v", trial, got)
		for _, s := range []*workers.Workers{a, y1, y2, z} {
			s.Close()
		}
	}
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
			testutil.Within(t, "the runs", 20*time.Second, func() {
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

// TestBusyLoopFromNestedCopyRunsOnCaller: a copy of a plain run on set B
// starts a loop on set A while another run holds A. The loop does not wait
// for A and no worker of A takes part: every chunk runs on the copy's
// goroutine, so a chunk that starts a run on B (which its own run holds)
// cannot be on a worker of A while B waits for the loop. No cycle, no panic.
func TestBusyLoopFromNestedCopyRunsOnCaller(t *testing.T) {
	a := workers.New("busy-a", 2, workers.WithConcurrentRuns())
	defer a.Close()
	b := workers.New("busy-b", 1, workers.WithConcurrentRuns())
	defer b.Close()
	a.RunN(tasks.Func("create", func(int) {}), 2) // both of A's workers exist
	release := holdSet(a, 1)                      // A is busy; one worker is idle
	defer release()
	var v any
	var offHolder atomic.Bool
	testutil.Within(t, "the runs", 30*time.Second, func() {
		v = panicValue(func() {
			b.RunN(tasks.Func("outer", func(int) {
				holder := goid.Get()
				a.ForRange(4, func(_, lo, _ int) {
					if goid.Get() != holder {
						offHolder.Store(true)
					}
					if lo == 1 {
						time.Sleep(10 * time.Millisecond) // time for an idle worker to help, if any could
					}
				}, workers.WithChunk(1))
			}), 1)
		})
	})
	assert.Nil(t, v, "%v", v)
	assert.False(t, offHolder.Load(), "a chunk of a busy loop ran off its caller")
	assert.Equal(t, uint64(1), a.Stats().BusyRuns)
}

// TestNoFalseCycleThroughBusyHolder: copy A0 of a plain run of one copy on
// A (worker A1 idle) calls B.RunN while another goroutine holds B with an
// inline run whose copy runs a busy loop of a 10 ms and a 300 ms chunk on A. That
// goroutine waits for nothing of A (the busy loop runs on it), so B is free
// soon after and A0's run must wait, not panic: RunN panics only for a run
// that could never start.
func TestNoFalseCycleThroughBusyHolder(t *testing.T) {
	a := workers.New("fc-a", 2, workers.WithConcurrentRuns())
	defer a.Close()
	a.RunN(tasks.Func("create", func(int) {}), 2) // A1 exists, idle
	b := workers.New("fc-b", 1)
	defer b.Close()
	aHeld := make(chan struct{})
	bHeld := make(chan struct{})
	holderDone := make(chan any, 1)
	go func() {
		<-aHeld
		holderDone <- panicValue(func() {
			b.RunN(tasks.CallerRuns(tasks.Func("inline", func(int) {
				close(bHeld)
				a.ForRange(2, func(_, lo, _ int) { time.Sleep(time.Duration(10+290*lo) * time.Millisecond) }, workers.WithChunk(1))
			})), 1)
		})
	}()
	var v any
	testutil.Within(t, "the runs", 30*time.Second, func() {
		v = panicValue(func() {
			a.RunN(tasks.Func("a", func(int) {
				close(aHeld)
				<-bHeld
				time.Sleep(20 * time.Millisecond) // the busy loop is under way
				b.RunN(tasks.Func("later", func(int) {}), 1)
			}), 1)
		})
	})
	assert.Nil(t, v, "a false cycle: %v", nestedMessage(v))
	assert.Nil(t, <-holderDone)
}
