package steal

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/testutil"
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
			s := NewSet[int](tc.n)
			require.Equal(t, tc.n, len(s.queues))
			for q, k := range tc.full {
				for i := range k {
					s.Push(q, q*100+i)
				}
			}
			v, ok := s.steal(tc.thief)
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
	s := NewSet[int](n)
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
		v, ok := s.steal(0)
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
	s := NewSet[string](3)
	assert.False(t, s.HasWork())
	s.Push(2, "x")
	s.Push(2, "y")
	assert.True(t, s.HasWork())
	assert.Equal(t, 2, size(s))
	v, ok := s.queues[2].Pop()
	require.True(t, ok)
	assert.Equal(t, "y", v)
	assert.Equal(t, 1, (&s.queues[2]).Len())
	assert.PanicsWithValue(t, "steal: NewSet: n = 0, want >= 1", func() { NewSet[int](0) })
}

// stressRun runs one phase: n workers drain a tree of items with stealing
// and termination. Item v < limit spawns children 2v+1 and 2v+2 (a binary
// tree rooted at 0), so the work is discovered while it is done; all of it
// starts on worker 0, so the others must  Each worker counts every item
// it processes, and checks, whenever Offer returns true, that all limit items
// have been processed: termination declared while some worker still held
// work would fail that check.
//
// It returns the number of items processed by workers other than 0.
func stressRun(t *testing.T, s *Set[int], term *Terminator, n, limit int, counts []atomic.Int32) int64 {
	t.Helper()
	var processed, byThieves atomic.Int64
	var early atomic.Int64 // processed count seen by a premature termination
	early.Store(-1)
	s.Push(0, 0)
	testutil.RunCopies(n, func(w int) {
		for {
			v, ok := s.queues[w].Pop()
			if !ok {
				v, ok = s.steal(w)
			}
			if ok {
				counts[v].Add(1)
				for _, c := range []int{2*v + 1, 2*v + 2} {
					if c < limit {
						s.Push(w, c)
					}
				}
				if processed.Add(1)%256 == 0 {
					runtime.Gosched() // thieves get to run at GOMAXPROCS 1 too
				}
				if w != 0 {
					byThieves.Add(1)
				}
				continue
			}
			if term.offer() {
				if p := processed.Load(); p != int64(limit) {
					early.Store(p)
				}
				return
			}
		}
	})
	if p := early.Load(); p >= 0 {
		t.Fatalf("Offer returned true after %d of %d items were processed", p, limit)
	}
	return byThieves.Load()
}

// stressPhases runs many phases of limit items on sets of 1..4 workers
// (more than the CPUs, so waiters also reach the sleep stage), each phase by
// phase on the same set and terminator. After each phase it checks that
// every item was processed exactly once (counts), that the queues are empty,
// that check (if not nil) holds and that the terminator ended the phase; on
// more than one worker, that some item was processed by a worker other than
// 0 (phase returns how many), else the test exercised no stealing.
func stressPhases(t *testing.T, phase func(t *testing.T, s *Set[int], term *Terminator, n, limit int, counts []atomic.Int32) int64,
	check func(t *testing.T, s *Set[int], n, run int)) {
	runs := scale(15, 150)
	for _, n := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			s := NewSet[int](n)
			term := NewTerminator(n, s.HasWork)
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
				spread += phase(t, s, term, n, limit, counts)
				for v := range counts {
					if c := counts[v].Swap(0); c != 1 {
						t.Fatalf("run %d: item %d processed %d times; want 1", run, v, c)
					}
				}
				require.False(t, s.HasWork(), "run %d: queues not empty", run)
				if check != nil {
					check(t, s, n, run)
				}
				require.True(t, term.done(), "run %d", run)
				term.Reset()
			}
		})
	}
}

// TestStressCountsEveryItem: every item exactly once with Pop, Steal and
// Offer, no worker told to terminate while work remained (stressRun).
func TestStressCountsEveryItem(t *testing.T) {
	stressPhases(t, stressRun, nil)
}

// TestStressThinWork has a single chain of items (each spawns one), so at
// most one value exists at a time and every other worker keeps offering and
// withdrawing: the hardest case for termination.
func TestStressThinWork(t *testing.T) {
	const n = 3
	runs := scale(5, 50)
	s := NewSet[int](n)
	term := NewTerminator(n, s.HasWork)
	const limit = 3000
	for run := range runs {
		var processed atomic.Int32
		seen := make([]atomic.Int32, limit)
		s.Push(0, 0)
		testutil.RunCopies(n, func(w int) {
			s.Drain(w, term, func(l *Local[int], v int) {
				w := l.Worker()
				seen[v].Add(1)
				processed.Add(1)
				if v+1 < limit {
					s.Push(w, v+1)
				}
			})
		})
		require.Equal(t, int32(limit), processed.Load(), "run %d", run)
		for v := range seen {
			require.Equal(t, int32(1), seen[v].Load(), "run %d item %d", run, v)
		}
		term.Reset()
	}
}

// TestTerminatorSleeperWakesForWork lets the other workers reach the sleep
// stage while worker 0 holds work privately, then has worker 0 publish one
// value that only another worker may take (worker 0 waits for it to be taken
// before it goes on): work published while every other worker waits must be
// noticed. The spin master polls the queues even while it naps, so it can
// take the value itself: this test does not need a sleeper to be woken
// (TestTerminatorEverySleeperWokenForWork does). It gives up after 20 seconds
// rather than hang.
func TestTerminatorSleeperWakesForWork(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			s := NewSet[int](n)
			term := NewTerminator(n, s.HasWork)
			takenBy := make(chan int, 1)
			failed := make(chan struct{})
			testutil.RunCopies(n, func(w int) {
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
				s.Drain(w, term, func(l *Local[int], v int) {
					w := l.Worker()
					if w != 0 {
						takenBy <- w
					}
				})
			})
			select {
			case <-failed:
				t.Fatal("no sleeping worker woke up to steal the published value")
			default:
			}
			assert.True(t, term.done())
		})
	}
}

// TestTerminatorEverySleeperWokenForWork needs sleeping (non-master) waiters
// to be woken when work appears, which TestTerminatorSleeperWakesForWork does
// not: there the spin master can take the one value itself.
//
// Here workers 1..n-1 offer first (one becomes master, the others block on
// the wake channel); worker 0 then publishes 64 values and every thief holds
// the first value it took until each of the n-1 thieves has taken one. The
// master steals a batch (see Drain) and holds its first value, so the values
// it left can only be taken by sleepers, which only the master's release (and
// then passOn) wakes. If a wake-up is lost, the deadline expires and the test
// fails instead of hanging.
func TestTerminatorEverySleeperWokenForWork(t *testing.T) {
	for _, n := range []int{3, 4} {
		for _, delay := range []time.Duration{200 * time.Microsecond, 3 * time.Millisecond} {
			t.Run(fmt.Sprintf("workers=%d/delay=%v", n, delay), func(t *testing.T) {
				s := NewSet[int](n)
				term := NewTerminator(n, s.HasWork)
				for round := range 4 {
					if !holdUntilAllTaken(s, term, n, delay) {
						t.Fatalf("round %d: published values were not all taken by sleeping workers within the deadline (a sleeper was not woken)", round)
					}
					term.Reset()
				}
			})
		}
	}
}

// holdUntilAllTaken runs one phase of TestTerminatorEverySleeperWokenForWork
// and reports whether it ended before the deadline.
func holdUntilAllTaken(s *Set[int], term *Terminator, n int, delay time.Duration) bool {
	k := int32(n - 1) // thieves
	holding := make([]atomic.Bool, n)
	deadline := time.Now().Add(5 * time.Second)
	var taken atomic.Int32
	var timedOut atomic.Bool
	waitAll := func() {
		for taken.Load() < k {
			if time.Now().After(deadline) {
				timedOut.Store(true)
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	testutil.RunCopies(n, func(w int) {
		if w == 0 {
			time.Sleep(delay) // let the others offer, spin, and sleep
			for i := range 64 {
				s.Push(0, i)
			}
			waitAll()
		}
		s.Drain(w, term, func(l *Local[int], _ int) {
			w := l.Worker()
			if w == 0 || holding[w].Swap(true) {
				return // the rest of a batch, or after a timeout: clean up
			}
			taken.Add(1)
			waitAll() // hold the value until every thief took one
		})
	})
	return !timedOut.Load()
}

func TestTerminatorAllOffer(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			term := NewTerminator(n, func() bool { return false })
			assert.Equal(t, n, term.workers())
			for range 3 {
				var trues atomic.Int32
				var wg sync.WaitGroup
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if term.offer() {
							trues.Add(1)
						}
					}()
				}
				wg.Wait()
				assert.Equal(t, int32(n), trues.Load())
				term.Reset()
				assert.False(t, term.done())
			}
		})
	}
}

func TestTerminatorPanics(t *testing.T) {
	none := func() bool { return false }
	assert.PanicsWithValue(t, "steal: NewTerminator: n = 0 out of range [1, 1073741824]", func() { NewTerminator(0, none) })
	assert.PanicsWithValue(t, "steal: NewTerminator: n = 1073741825 out of range [1, 1073741824]", func() { NewTerminator(1<<30+1, none) })
	assert.PanicsWithValue(t, "steal: NewTerminator: nil hasWork", func() { NewTerminator(1, nil) })
}

// TestTerminatorOfferAfterTerminationPanics: an Offer after the phase
// terminated, without Reset, would wait forever for a count of n that is
// already past; it panics instead. After Reset, or after an abort, offering
// again is fine.
func TestTerminatorOfferAfterTerminationPanics(t *testing.T) {
	term := NewTerminator(2, func() bool { return false })
	done := make(chan bool)
	go func() { done <- term.offer() }()
	require.True(t, term.offer())
	require.True(t, <-done)
	assert.PanicsWithValue(t,
		"steal: Terminator: 3 offers, n = 2: Drain called again after the phase terminated (Reset the Terminator first), or by more than n workers",
		func() { term.offer() })

	term.Reset()
	go func() { done <- term.offer() }()
	require.True(t, term.offer())
	require.True(t, <-done)

	term.Reset()
	term.Abort()
	for range 4 { // more offers than workers: allowed once aborted
		assert.True(t, term.offer())
	}
}

func TestDrainPanicsOnMismatchedTerminator(t *testing.T) {
	s := NewSet[int](2)
	term := NewTerminator(3, s.HasWork)
	assert.PanicsWithValue(t, "steal: Set.Drain: Terminator for 3 workers, Set of 2 deques; want the same",
		func() { s.Drain(0, term, func(*Local[int], int) {}) })
	assert.False(t, term.Aborted(), "a misuse caught before the phase starts aborts nothing")
}

// TestDrainPanicAbortsPhase has one worker's process panic while the others
// wait for work: Drain must abort the terminator so that they return, and let
// the panic continue in the worker that raised it.
func TestDrainPanicAbortsPhase(t *testing.T) {
	const n = 3
	s := NewSet[int](n)
	term := NewTerminator(n, s.HasWork)
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
			s.Drain(w, term, func(_ *Local[int], v int) {
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
	assert.True(t, term.done())
	term.Reset()
	assert.False(t, term.Aborted())
}

func TestAbortBeforeOffer(t *testing.T) {
	term := NewTerminator(2, func() bool { return true })
	term.Abort()
	assert.True(t, term.offer(), "Offer after Abort returns true even with work around")
}

// TestDrainReturnsSoonAfterAbort queues plenty of work on every worker and
// has worker 0's process panic: the other workers must stop within
// DrainAbortEvery values of seeing the abort rather than process the rest of
// the work. It counts values, not time: each other worker holds its first
// value until the abort has happened, then counts the values whose
// processing starts with the abort visible. The work left behind is then
// dropped with Clear, and the set and terminator serve a normal phase.
func TestDrainReturnsSoonAfterAbort(t *testing.T) {
	const n = 3
	const perQueue = 10000
	const panicAt = 10 // worker 0 panics on its 10th value
	s := NewSet[int](n)
	term := NewTerminator(n, s.HasWork)
	for round := range 3 {
		for w := range n {
			for i := range perQueue {
				s.Push(w, i)
			}
		}
		aborted := make(chan struct{})
		var after [n]atomic.Int64 // values processed with the abort visible, by worker
		var processed atomic.Int64
		var panics atomic.Int32
		testutil.RunCopies(n, func(w int) {
			if w == 0 {
				defer func() {
					// Drain's deferred Abort has run by now.
					if r := recover(); r != nil {
						assert.Equal(t, "bad value", r)
						panics.Add(1)
					}
					close(aborted)
				}()
			}
			mine := 0
			s.Drain(w, term, func(l *Local[int], v int) {
				w := l.Worker()
				processed.Add(1)
				mine++
				if w == 0 {
					if mine == panicAt {
						panic("bad value")
					}
					return
				}
				if term.Aborted() {
					after[w].Add(1)
					return
				}
				if mine == 1 {
					select {
					case <-aborted:
					case <-time.After(20 * time.Second):
						t.Error("worker 0 did not abort the phase")
					}
				}
			})
		})
		require.Equal(t, int32(1), panics.Load(), "round %d", round)
		require.True(t, term.Aborted(), "round %d", round)
		for w := 1; w < n; w++ {
			got := after[w].Load()
			assert.LessOrEqual(t, got, int64(drainAbortEvery), "round %d: worker %d processed %d values after it saw the abort", round, w, got)
		}
		left := size(s)
		assert.Equal(t, int64(n*perQueue), processed.Load()+int64(left), "round %d: every value processed or left", round)
		assert.Greater(t, left, n*perQueue/2, "round %d: most of the work is left behind", round)
		t.Logf("round %d: %d values processed, %d left; after the abort: %d and %d", round, processed.Load(), left, after[1].Load(), after[2].Load())

		s.Clear()
		assert.Zero(t, size(s), "round %d: after Clear", round)
		assert.False(t, s.HasWork(), "round %d: after Clear", round)
		term.Reset()
	}

	// A normal phase on the same set and terminator sees only its own work.
	const fresh = 1000
	for i := range fresh {
		s.Push(i%n, -1)
	}
	var processed atomic.Int64
	testutil.RunCopies(n, func(w int) {
		s.Drain(w, term, func(_ *Local[int], v int) {
			assert.Equal(t, -1, v, "a value left by an aborted phase came back")
			processed.Add(1)
		})
	})
	assert.Equal(t, int64(fresh), processed.Load())
	assert.False(t, term.Aborted())
}

func TestSetClear(t *testing.T) {
	s := NewSet[*int](3)
	x := 1
	s.Push(0, &x)
	s.Push(0, &x)
	s.Push(2, &x)
	_, ok := s.steal(1)
	require.True(t, ok)
	require.Equal(t, 2, size(s))
	s.Clear()
	assert.Zero(t, size(s))
	assert.False(t, s.HasWork())
	for w := range 3 {
		_, ok := s.queues[w].Pop()
		assert.False(t, ok, "Pop(%d) after Clear", w)
		_, ok = s.steal(w)
		assert.False(t, ok, "Steal(%d) after Clear", w)
	}
	s.Push(1, &x)
	v, ok := s.steal(0)
	require.True(t, ok)
	assert.Same(t, &x, v)
}

// size returns the number of values in s's deques, as a snapshot.
func size[T any](s *Set[T]) int {
	total := 0
	for i := range s.queues {
		total += s.queues[i].Len()
	}
	return total
}
