package steal

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/testutil"
)

// drainLocalTree runs one Drain phase over the binary tree of limit
// items rooted at 0 (item v spawns 2v+1 and 2v+2), all of it discovered on
// worker 0 and kept on private stacks: the others get work only through the
// publication to the hungry. It counts each processed item in counts and
// returns the items processed by workers other than 0.
func drainLocalTree(_ *testing.T, s *Set[int], term *Terminator, n, limit int, counts []atomic.Int32) int64 {
	var others atomic.Int64
	s.locals[0].Push(0)
	testutil.RunCopies(n, func(w int) {
		s.Drain(w, term, func(l *Local[int], v int) {
			counts[v].Add(1)
			if l.Worker() != 0 {
				others.Add(1)
			}
			if v%256 == 0 {
				runtime.Gosched() // the hungry get to ask at GOMAXPROCS 1 too
			}
			for _, c := range []int{2*v + 1, 2*v + 2} {
				if c < limit {
					l.Push(c)
				}
			}
		})
	})
	return others.Load()
}

// TestStressDrainLocalCountsEveryItem: every item exactly once with
// Drain pushing to the private stacks, phase after phase on the same set; nothing left afterwards,
// neither in the deques nor on the private stacks.
func TestStressDrainLocalCountsEveryItem(t *testing.T) {
	stressPhases(t, drainLocalTree, func(t *testing.T, s *Set[int], n, run int) {
		for w := range n {
			require.Zero(t, s.locals[w].count(), "run %d: private stack %d not empty", run, w)
		}
	})
}

// TestDrainLocalPublishesToHungry: worker 0 discovers 64 values, all kept on
// its private stack, and takes a millisecond over each; worker 1 can get one
// only if worker 0 publishes while it is hungry. Without the publication
// worker 0 would process all of them.
func TestDrainLocalPublishesToHungry(t *testing.T) {
	s := NewSet[int](2)
	term := NewTerminator(2, s.HasWork)
	var byOne, processed atomic.Int64
	s.locals[0].Push(-1) // the root: 64 children
	testutil.RunCopies(2, func(w int) {
		s.Drain(w, term, func(l *Local[int], v int) {
			processed.Add(1)
			switch {
			case v < 0:
				for c := range 64 {
					l.Push(c)
				}
			case l.Worker() == 1:
				byOne.Add(1)
			default:
				time.Sleep(time.Millisecond)
			}
		})
	})
	assert.Positive(t, byOne.Load(), "worker 1 never got a published value")
	assert.Equal(t, int64(65), processed.Load())
	assert.Zero(t, size(s))
}

// TestDrainLocalPanicAbortsAndEmpties: a panic in process aborts the phase,
// and the private stack of the worker that panicked is emptied, so the next
// phase does not see the abandoned values.
func TestDrainLocalPanicAbortsAndEmpties(t *testing.T) {
	s := NewSet[int](1)
	term := NewTerminator(1, s.HasWork)
	s.locals[0].Push(1)
	assert.PanicsWithValue(t, "boom", func() {
		s.Drain(0, term, func(l *Local[int], v int) {
			for c := range 10 {
				l.Push(c + 100)
			}
			panic("boom")
		})
	})
	assert.True(t, term.Aborted())
	assert.Zero(t, s.locals[0].count())
	term.Reset()
	var got []int
	s.locals[0].Push(7)
	s.Drain(0, term, func(_ *Local[int], v int) { got = append(got, v) })
	assert.Equal(t, []int{7}, got)

	other := NewTerminator(2, s.HasWork)
	assert.PanicsWithValue(t, "steal: Set.Drain: Terminator for 2 workers, Set of 1 deques; want the same",
		func() { s.Drain(0, other, func(*Local[int], int) {}) })
}

// TestDrainAllocatesNothing: a phase of Drain on a warm set, its process
// pushing to the deque or to the private stack, allocates nothing.
func TestDrainAllocatesNothing(t *testing.T) {
	s := NewSet[int](1)
	term := NewTerminator(1, s.HasWork)
	push := func(l *Local[int], v int) {
		w := l.Worker()
		if v < 100 {
			s.Push(w, v+1)
		}
	}
	pushLocal := func(l *Local[int], v int) {
		if v < 100 {
			l.Push(v + 1)
		}
	}
	for _, tc := range []struct {
		name string
		run  func()
	}{
		{"deque pushes", func() { s.Push(0, 0); s.Drain(0, term, push) }},
		{"private pushes", func() { s.locals[0].Push(0); s.Drain(0, term, pushLocal) }},
	} {
		tc.run() // grow the arrays
		term.Reset()
		allocs := testing.AllocsPerRun(20, func() { tc.run(); term.Reset() })
		assert.Zero(t, allocs, tc.name)
	}
}

// TestDrainLocalStealsABatch: a thief in Drain takes, besides the value
// it steals, half of what is left in the victim's deque onto its private
// stack. Worker 0 starts only once worker 1 has processed its first value, so
// that value came from a steal of worker 0's 40 values.
func TestDrainLocalStealsABatch(t *testing.T) {
	s := NewSet[int](2)
	term := NewTerminator(2, s.HasWork)
	for v := range 40 {
		s.Push(0, v)
	}
	first := -1
	started := make(chan struct{})
	var processed atomic.Int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.Drain(1, term, func(l *Local[int], v int) {
			processed.Add(1)
			if first < 0 {
				first = l.count()
				close(started)
			}
		})
	}()
	go func() {
		defer wg.Done()
		<-started
		s.Drain(0, term, func(*Local[int], int) { processed.Add(1) })
	}()
	wg.Wait()
	assert.Equal(t, 19, first, "values on the thief's private stack after its first steal: half of the 39 left")
	assert.Equal(t, int64(40), processed.Load())
	assert.GreaterOrEqual(t, s.Steals(1), int64(20))
}
