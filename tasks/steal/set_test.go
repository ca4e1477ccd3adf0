package steal_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/tasks/steal"
)

func TestSetSteal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		full    []int // values pushed to each queue, by owner index
		thief   int
		wantOK  bool
		wantAny []int // acceptable stolen values
	}{
		{"single queue never steals", 1, []int{3}, 0, false, nil},
		{"two queues, other empty", 2, []int{2, 0}, 0, false, nil},
		{"two queues", 2, []int{0, 2}, 0, true, []int{100}},
		{"four queues, one full", 4, []int{0, 0, 5, 0}, 0, true, []int{200}},
		{"four queues, own full only", 4, []int{5, 0, 0, 0}, 0, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := steal.NewSet[int](tc.n)
			require.Equal(t, tc.n, s.Len())
			for q, k := range tc.full {
				for i := range k {
					s.Push(q, q*100+i)
				}
			}
			v, ok := s.Steal(tc.thief)
			require.Equal(t, tc.wantOK, ok)
			if ok {
				assert.Contains(t, tc.wantAny, v)
			}
		})
	}
}

func TestSetBestOfTwoPrefersLonger(t *testing.T) {
	// With many victims, best-of-two picks the longer queue of each pair,
	// so the one long queue is drained far more often than a random
	// choice would (1/7): every steal that sees it in its pair takes it.
	const n = 8
	s := steal.NewSet[int](n)
	for q := 1; q < n; q++ {
		k := 1000
		if q == 5 {
			k = 100000
		}
		for i := range k {
			s.Push(q, q*1000000+i)
		}
	}
	fromLong := 0
	for range 700 {
		v, ok := s.Steal(0)
		require.True(t, ok)
		if v/1000000 == 5 {
			fromLong++
		}
	}
	// Random choice would give about 100; best of two about 2/7 of 700 at
	// least, and with affinity to the last victim much more.
	assert.Greater(t, fromLong, 200, "steals from the longest queue")
}

func TestSetHasWorkAndSize(t *testing.T) {
	s := steal.NewSet[string](3)
	assert.False(t, s.HasWork())
	s.Push(2, "x")
	s.Push(2, "y")
	assert.True(t, s.HasWork())
	assert.Equal(t, 2, s.Size())
	v, ok := s.Pop(2)
	require.True(t, ok)
	assert.Equal(t, "y", v)
	assert.Equal(t, 1, s.Queue(2).Len())
	assert.PanicsWithValue(t, "steal: NewSet: n = 0, want >= 1", func() { steal.NewSet[int](0) })
}

// stressRun runs one phase: n workers drain a tree of items with stealing
// and termination. Item v < limit spawns children 2v+1 and 2v+2 (a binary
// tree rooted at 0), so the work is discovered while it is done; all of it
// starts on worker 0, so the others must steal. Each worker counts every item
// it processes, and checks, whenever Offer returns true, that all limit items
// have been processed: termination declared while some worker still held
// work would fail that check.
//
// It returns the number of items processed by workers other than 0.
func stressRun(t *testing.T, s *steal.Set[int], term *steal.Terminator, n, limit int, counts []atomic.Int32) int64 {
	t.Helper()
	var processed, byThieves atomic.Int64
	var early atomic.Int64 // processed count seen by a premature termination
	early.Store(-1)
	s.Push(0, 0)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, ok := s.Pop(w)
				if !ok {
					v, ok = s.Steal(w)
				}
				if ok {
					counts[v].Add(1)
					for _, c := range []int{2*v + 1, 2*v + 2} {
						if c < limit {
							s.Push(w, c)
						}
					}
					processed.Add(1)
					if w != 0 {
						byThieves.Add(1)
					}
					continue
				}
				if term.Offer() {
					if p := processed.Load(); p != int64(limit) {
						early.Store(p)
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	if p := early.Load(); p >= 0 {
		t.Fatalf("Offer returned true after %d of %d items were processed", p, limit)
	}
	return byThieves.Load()
}

// TestStressCountsEveryItem runs many phases on 1..4 workers (more than the
// CPUs, so waiters also reach the sleep stage) and checks that every item is
// processed exactly once, that no worker was told to terminate while work
// remained, that every queue is empty afterwards, and that the terminator
// ended the phase.
func TestStressCountsEveryItem(t *testing.T) {
	runs := scale(15, 150)
	for _, n := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			s := steal.NewSet[int](n)
			term := steal.NewTerminator(n, s.HasWork)
			const limit = 1 << 13
			counts := make([]atomic.Int32, limit)
			var spread int64
			defer func() {
				if n > 1 && spread == 0 && !t.Failed() {
					t.Error("no worker but 0 ever processed an item; the test exercised no stealing")
				}
				t.Logf("%d runs of %d items; %d processed by workers other than 0", runs, limit, spread)
			}()
			for run := range runs {
				spread += stressRun(t, s, term, n, limit, counts)
				for v := range counts {
					if c := counts[v].Swap(0); c != 1 {
						t.Fatalf("run %d: item %d processed %d times; want 1", run, v, c)
					}
				}
				require.False(t, s.HasWork(), "run %d: queues not empty", run)
				require.True(t, term.Terminated(), "run %d", run)
				term.Reset()
			}
		})
	}
}

// TestStressThinWork has a single chain of items (each spawns one), so at
// most one value exists at a time and every other worker keeps offering and
// withdrawing: the hardest case for termination.
func TestStressThinWork(t *testing.T) {
	const n = 3
	runs := scale(5, 50)
	s := steal.NewSet[int](n)
	term := steal.NewTerminator(n, s.HasWork)
	const limit = 3000
	for run := range runs {
		var processed atomic.Int32
		seen := make([]atomic.Int32, limit)
		s.Push(0, 0)
		var wg sync.WaitGroup
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Drain(w, term, func(w, v int) {
					seen[v].Add(1)
					processed.Add(1)
					if v+1 < limit {
						s.Push(w, v+1)
					}
				})
			}()
		}
		wg.Wait()
		require.Equal(t, int32(limit), processed.Load(), "run %d", run)
		for v := range seen {
			require.Equal(t, int32(1), seen[v].Load(), "run %d item %d", run, v)
		}
		term.Reset()
	}
}

// TestTerminatorSleeperWakesForWork lets the other workers reach the sleep
// stage while worker 0 holds work privately, then has worker 0 publish work
// that only another worker may take (worker 0 waits for it to be taken
// before it goes on). If sleepers were not woken when a queue shows work,
// worker 0 would wait forever; the test gives up after 20 seconds.
func TestTerminatorSleeperWakesForWork(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			s := steal.NewSet[int](n)
			term := steal.NewTerminator(n, s.HasWork)
			takenBy := make(chan int, 1)
			failed := make(chan struct{})
			var wg sync.WaitGroup
			for w := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if w == 0 {
						// Hold work privately long enough for the
						// others to go from spinning to sleeping (not
						// a timing assertion: the test passes either
						// way, it only steers the path taken).
						time.Sleep(5 * time.Millisecond)
						s.Push(0, 42)
						select {
						case <-takenBy:
						case <-time.After(20 * time.Second):
							close(failed)
						}
					}
					s.Drain(w, term, func(w, v int) {
						if w != 0 {
							takenBy <- w
						}
					})
				}()
			}
			wg.Wait()
			select {
			case <-failed:
				t.Fatal("no sleeping worker woke up to steal the published value")
			default:
			}
			assert.True(t, term.Terminated())
		})
	}
}

func TestTerminatorAllOffer(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			term := steal.NewTerminator(n, func() bool { return false })
			assert.Equal(t, n, term.Workers())
			for range 3 {
				var trues atomic.Int32
				var wg sync.WaitGroup
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if term.Offer() {
							trues.Add(1)
						}
					}()
				}
				wg.Wait()
				assert.Equal(t, int32(n), trues.Load())
				term.Reset()
				assert.False(t, term.Terminated())
			}
		})
	}
}

func TestTerminatorPanics(t *testing.T) {
	assert.PanicsWithValue(t, "steal: NewTerminator: n = 0, want >= 1", func() { steal.NewTerminator(0, func() bool { return false }) })
	assert.PanicsWithValue(t, "steal: NewTerminator: nil hasWork", func() { steal.NewTerminator(1, nil) })
}

// TestDrainPanicAbortsPhase has one worker's process panic while the others
// wait for work: Drain must abort the terminator so that they return, and let
// the panic continue in the worker that raised it.
func TestDrainPanicAbortsPhase(t *testing.T) {
	const n = 3
	s := steal.NewSet[int](n)
	term := steal.NewTerminator(n, s.HasWork)
	s.Push(0, 0)
	var panics atomic.Int32
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					assert.Equal(t, "bad item", r)
					panics.Add(1)
				}
			}()
			s.Drain(w, term, func(w, v int) {
				if v == 0 {
					time.Sleep(2 * time.Millisecond) // let the others reach Offer (not asserted)
					panic("bad item")
				}
			})
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("workers still waiting after a sibling panicked")
	}
	assert.Equal(t, int32(1), panics.Load())
	assert.True(t, term.Aborted())
	assert.True(t, term.Terminated())
	term.Reset()
	assert.False(t, term.Aborted())
}

func TestAbortBeforeOffer(t *testing.T) {
	term := steal.NewTerminator(2, func() bool { return true })
	term.Abort()
	assert.True(t, term.Offer(), "Offer after Abort returns true even with work around")
}
