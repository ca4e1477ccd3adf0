package steal

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
)

// Set is a set of deques, one per worker, each with a private stack (Local)
// in front of it, and victim selection for thieves: worker w owns deque w and
// steals from the others in Drain. Create one with NewSet. A Set must not be
// copied after first use.
//
// Methods that take a worker id may be called concurrently for distinct ids;
// calls with the same id must come from one goroutine at a time (the one
// running copy w of a task). HasWork may be called by anyone. Clear needs the
// whole set quiescent.
type Set[T any] struct {
	// hungry counts the workers of Drain that found their own stack
	// and deque empty and have not found work since (they are stealing or
	// waiting in Offer). Workers holding private values publish some when
	// it is above zero. Its own line: it changes only when a worker runs
	// out of work or finds some, and is read after every value processed.
	_      pad.Line
	hungry atomic.Int32
	_      [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Int32{})]byte

	// Read-only after NewSet: the slice headers, on the line after hungry's.
	queues  []deque[T]
	thieves []thief
	locals  []Local[T]
}

// thief is the per-worker victim-selection state: touched only by the worker
// that owns it, padded so that neighbouring workers do not share a line.
type thief struct {
	thiefState
	_ [uintptr(pad.CacheLine) - unsafe.Sizeof(thiefState{})]byte
}

type thiefState struct {
	rng    uint64 // xorshift state, never 0
	last   int    // the victim of the last successful steal, or -1
	steals int64  // successful steals since NewSet
}

// NewSet returns a set of n empty deques. It panics if n < 1.
func NewSet[T any](n int) *Set[T] {
	if n < 1 {
		panic(fmt.Sprintf("steal: NewSet: n = %d, want >= 1", n))
	}
	s := &Set[T]{queues: make([]deque[T], n), thieves: make([]thief, n), locals: make([]Local[T], n)}
	for i := range s.locals {
		s.locals[i].w = i
	}
	for i := range s.thieves {
		// Distinct, deterministic, non-zero seeds: a run is reproducible
		// in its choices given the same interleaving.
		s.thieves[i].thiefState = thiefState{rng: uint64(i+1) * 0x9e3779b97f4a7c15, last: -1}
	}
	return s
}

// Steals returns the number of values worker w has stolen since NewSet. Like
// the other methods taking w, it is for worker w; anyone else may read it
// only with a happens-before edge from w's steals (after the run that made
// them, say).
func (s *Set[T]) Steals(w int) int64 { return s.thieves[w].steals }

// Push adds v to worker w's deque, where thieves can see it at once: for the
// values a phase starts from (its roots), or for values worth sharing
// (process may push to its own worker's deque too).
func (s *Set[T]) Push(w int, v T) { s.queues[w].Push(v) }

// steal takes a value from another worker's deque on behalf of worker w. It
// picks victims with best-of-two random selection: of two distinct candidates
// (the victim of w's last successful steal and a random one, or two random
// ones), it tries the one with more values. It makes up to 2n attempts (n
// deques) and reports false if all found their victim empty.
//
// Best of two random choices spreads thieves over the busiest deques with
// far less imbalance than one random choice (the "power of two choices"),
// while reading only two sizes per attempt instead of all of them.
func (s *Set[T]) steal(w int) (v T, ok bool) {
	n := len(s.queues)
	if n == 1 {
		return v, false
	}
	th := &s.thieves[w]
	for range 2 * n {
		victim := s.pick(w, th)
		if v, ok = s.queues[victim].Steal(); ok {
			th.last = victim
			th.steals++
			return v, true
		}
		th.last = -1
	}
	return v, false
}

// pick chooses a victim other than w.
func (s *Set[T]) pick(w int, th *thief) int {
	n := len(s.queues)
	if n == 2 {
		return 1 - w
	}
	a := th.last
	if a < 0 {
		a = th.other(w, -1, n)
	}
	b := th.other(w, a, n)
	if s.queues[b].Len() > s.queues[a].Len() {
		return b
	}
	return a
}

// other returns a random worker in [0, n) that is neither w nor x (x may be
// -1). It needs n >= 3 when x >= 0.
func (th *thief) other(w, x, n int) int {
	for {
		// xorshift64: a full-period generator on non-zero states; its
		// quality is ample for choosing victims.
		r := th.rng
		r ^= r << 13
		r ^= r >> 7
		r ^= r << 17
		th.rng = r
		k := int((r >> 32) % uint64(n))
		if k != w && k != x {
			return k
		}
	}
}

// HasWork reports whether any deque looked non-empty. It is a snapshot: a
// Terminator uses it to decide whether to stop waiting and try stealing (pass
// it to NewTerminator).
func (s *Set[T]) HasWork() bool {
	for i := range s.queues {
		if !s.queues[i].Empty() {
			return true
		}
	}
	return false
}

// Clear drops every value left in the set's deques and private stacks and
// zeroes their arrays, keeping the arrays for later use. It is for the owner
// side at quiescence: call it only when no copy of a phase runs, that is when
// no goroutine is inside any other method of the set except HasWork, with a
// happens-before edge from every earlier use and to every later one (the end
// and start of worker-set runs give both).
//
// A phase that ends normally leaves the set empty. One that is aborted (see
// Terminator.Abort and Drain) may leave values behind, which the next phase
// would otherwise process; call Clear before reusing the set, and Reset the
// Terminator.
func (s *Set[T]) Clear() {
	for i := range s.queues {
		s.queues[i].Clear()
	}
	for i := range s.thieves {
		s.thieves[i].last = -1 // forget victims of the old phase
	}
	for i := range s.locals {
		s.locals[i].clear()
	}
	// A worker that leaves loop on an abort or on termination while it is
	// hungry does not take its announcement back; the next phase starts
	// from zero here.
	s.hungry.Store(0)
}

// drainAbortEvery is how many values Drain processes between two checks for
// an abort (it also checks before every steal): a power of two, so that the
// check costs an AND and a branch per value and one atomic load per
// drainAbortEvery values.
const drainAbortEvery = 32

// publishMost is how many values Drain moves from a private stack to the
// deque at most at a time (half the stack, up to this many). A thief takes a
// batch of them at once (see Drain); the more it gets, the longer it stays
// busy before it is hungry again, which in a graph whose workers keep finding
// each other's objects marked already is what sets the parallel speed (see
// BenchmarkMark in examples/gc/mark).
const publishMost = 1024

// Drain runs worker w's part of a stealing phase, the loop of a collector's
// marker: process receives w's private stack (Local) and each value, and
// pushes the values it discovers there (Local.Push, a plain append). Drain
// takes values from the private stack first, then from w's deque, then by
// stealing from the others, then offers termination to t; it returns when t
// reports termination, that is when every worker has run out of values, or
// soon after t is aborted: it checks t.Aborted() before every steal and after
// every drainAbortEvery (32) values it processes, so once the abort is visible
// it processes at most that many more values. t must have been made for as
// many workers as s has deques, with s.HasWork (see NewTerminator); Drain
// panics if not.
//
// Thieves cannot see the private stack. So that they still find work, Drain
// keeps count of the hungry workers, those that found their own stack and
// deque empty and have not found work since, and after each value it
// processes, if some worker is hungry, w's deque is empty and the private
// stack holds at least two values, it moves the oldest half of them, at most
// 1024, to w's deque with one store that publishes them all. While nobody is
// hungry, the only shared-memory access per value is one load of the counter,
// which stays in the reader's cache until the count changes. A hungry worker
// waits for the publication at most as long as the owner takes to process one
// value (process should not take long per value: split big values).
//
// A steal takes a batch: after the first value it takes up to half of what
// the victim's deque still holds (at most 255 more) onto w's private stack,
// each with its own CAS, so that a thief does not run dry again right after
// one stolen value.
//
// Values pushed to w's deque (Push: roots, say) are found too. Termination
// holds: a worker offers only with an empty private stack and deque, and while
// some worker holds private values, it is not offering, so the phase cannot
// end; it publishes when it sees the hungry count, and the waiters'
// Terminator sees the published values through HasWork.
//
// If process panics, Drain aborts t (see Terminator.Abort), so that the other
// workers return instead of waiting for this one or processing the rest of the
// work, and lets the panic go on. When Drain returns because t was aborted (or
// process panicked), it empties w's private stack: the values left there
// belong to the abandoned phase. Values may be left in the deques; Clear the
// set before the next phase.
func (s *Set[T]) Drain(w int, t *Terminator, process func(l *Local[T], v T)) {
	if t.workers() != len(s.queues) {
		panic(fmt.Sprintf("steal: Set.Drain: Terminator for %d workers, Set of %d deques; want the same", t.workers(), len(s.queues)))
	}
	returned := false
	defer func() {
		if !returned {
			s.locals[w].clear()
			t.Abort() // no recover: the panic keeps its stack
		}
	}()
	s.loop(w, t, process)
	returned = true
	if t.Aborted() {
		s.locals[w].clear()
	}
}

// stealMore is Drain's batched steal: after a steal from some victim, take
// up to half of what the victim's deque still holds, at most stealBatch-1
// more values, onto w's private stack. A thief that took a single value would
// often run dry again soon (in a graph, most of that value's children are
// already marked by the others) and pay for another round of hunger and
// publication; a batch keeps it busy. Each value is still taken with its own
// CAS on the victim's top, so the deque's protocol is unchanged.
func (s *Set[T]) stealMore(w int, l *Local[T]) {
	victim := s.thieves[w].last
	if victim < 0 {
		return
	}
	q := &s.queues[victim]
	k := min(q.Len()/2, stealBatch-1)
	for range k {
		v, ok := q.Steal()
		if !ok {
			return
		}
		s.thieves[w].steals++
		l.Push(v)
	}
}

// loop is the body of Drain.
func (s *Set[T]) loop(w int, t *Terminator, process func(l *Local[T], v T)) {
	q, l := &s.queues[w], &s.locals[w]
	// hungry tells the owners to publish their private stacks: alone,
	// nobody is ever hungry, so there is nothing to announce.
	share := len(s.queues) > 1
	hungry := false
	var processed uint
	for {
		v, ok := l.pop()
		if !ok {
			if v, ok = q.Pop(); !ok {
				if share && !hungry {
					// Announce before stealing, so that owners publish
					// while we look. The Add is a read-modify-write
					// on a line the owners only read; it happens once
					// per running dry, not per value.
					s.hungry.Add(1)
					hungry = true
				}
				// The abort check costs one atomic load, little next to
				// a steal (two or more loads of other workers' indices
				// and a CAS). An aborted Terminator makes Offer return
				// true, so the check only saves the steals.
				if t.Aborted() {
					break
				}
				if v, ok = s.steal(w); !ok {
					if t.offer() {
						break
					}
					continue // work showed up: Pop finds w's deque still empty, so steal it
				}
				s.stealMore(w, l)
			}
			if hungry {
				s.hungry.Add(-1)
				hungry = false
			}
		}
		process(l, v)
		// Publish for the hungry (see Drain). The load of hungry
		// orders nothing: a stale zero only delays the publication to the
		// next value, and the PushSlice publishes the values themselves.
		if share && l.count() > 1 && s.hungry.Load() > 0 && q.Empty() {
			l.publish(q, publishMost)
		}
		// aborted goes back to false only at Reset, between phases, and an
		// atomic load that sees the abort is followed in program order only
		// by loads that see it too. So once w can see the abort (in process,
		// say), at most drainAbortEvery values are processed before this
		// check or the one before the next steal returns.
		if processed++; processed%drainAbortEvery == 0 && t.Aborted() {
			break
		}
	}
	if hungry {
		s.hungry.Add(-1)
	}
}

// stealBatch is the most values a Drain steal takes at once.
const stealBatch = 256
