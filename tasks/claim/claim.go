// Package claim is an advanced building block, for runtimes that split their
// parallel phases into pieces themselves (most loops want workers.ForRange):
// it hands pieces of a phase to the copies of a task so that each piece runs
// exactly once, whichever copy gets there first.
//
// Subtasks is a fixed set of k independent subtasks that every copy tries to
// claim (HotSpot's SubTasksDone): copy w calls TryClaim(i) for each i and runs
// the subtasks it won. Sequential hands out the indices 0..k-1 in order
// (HotSpot's SequentialSubTasksDone): each copy ranges over All. The zero
// value of each has no subtasks; Reset(k) gives it k, and is meant to be
// called by the coordinator between runs, never during one. Claiming is
// allocation-free and lock-free.
//
// A claim belongs to one run. Package workers returns from Run only after
// every copy has returned, so a Reset made after Run returned cannot be
// observed by a late copy of the previous run; code that hands copies out
// some other way must give the same guarantee.
//
// The package imports only the standard library and internal/pad.
package claim

import (
	"fmt"
	"iter"
	"sync/atomic"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
)

// Subtasks is a set of k subtasks, each claimed at most once per run. The
// zero value has none; Reset gives it k. TryClaim is safe for concurrent
// use; Reset is not (call it between runs). A Subtasks must not be copied
// after first use.
//
// Memory model: a TryClaim that returns true is synchronized after the Reset
// that preceded the run, and nothing else: the winner of a subtask gets no
// ordering with the losers beyond what the run gives.
type Subtasks struct {
	// claimed[i] flips from false to true exactly once per run: the winning
	// CompareAndSwap. Subtasks are claimed once each, so neighbouring flags
	// sharing a cache line cost one miss per claim at most; padding each
	// flag to a line would cost memory for nothing.
	claimed []atomic.Bool
}

// Reset makes s a set of k unclaimed subtasks, numbered 0..k-1, reusing its
// array when it has room. It panics if k is negative. It must not run
// concurrently with TryClaim: call it between runs.
func (s *Subtasks) Reset(k int) {
	if k < 0 {
		panic(fmt.Sprintf("claim: Subtasks.Reset: negative count %d", k))
	}
	if cap(s.claimed) < k {
		s.claimed = make([]atomic.Bool, k)
		return
	}
	s.claimed = s.claimed[:k]
	for i := range s.claimed {
		s.claimed[i].Store(false)
	}
}

// TryClaim claims subtask i and reports whether the caller won it. Exactly one
// call per subtask and run returns true. It panics if i is out of range.
func (s *Subtasks) TryClaim(i int) bool {
	c := &s.claimed[i]
	// The plain load first: once a subtask is taken, the losers read a
	// shared line instead of each pulling it exclusive with a failing CAS.
	// The CAS is the claim itself; its atomicity alone makes the winner
	// unique (no other memory is ordered by it).
	return !c.Load() && c.CompareAndSwap(false, true)
}

// Sequential hands out the indices 0..k-1 in increasing order, each to exactly
// one copy ranging over All. The zero value has no indices; Reset gives it k.
// All is safe for concurrent use; Reset is not (call it between runs). A
// Sequential must not be copied after first use.
//
// Memory model: as for Subtasks, a claim orders nothing beyond the run.
type Sequential struct {
	// next is the single contended word: every claim is one fetch-and-add
	// on it. The pads keep it on a cache line of its own, so neighbours in an
	// enclosing struct do not bounce with it.
	_    pad.Line
	next atomic.Int64
	n    int64 // read-only during a run
	_    [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Int64{}) - unsafe.Sizeof(int64(0))]byte
}

// claim claims the next index. It returns (i, true) for each i in 0..k-1 once
// over all callers, in increasing order of the claims, and (0, false) once
// they are gone.
func (s *Sequential) claim() (int, bool) {
	// The load filters the common "all gone" case at the end of a phase, so
	// that copies checking one last time do not each pull the line
	// exclusive (and next grows by at most one per late caller that raced
	// past the load, so it cannot overflow). The Add is the claim: its
	// atomicity makes every returned index distinct.
	if s.next.Load() >= s.n {
		return 0, false
	}
	i := s.next.Add(1) - 1
	if i >= s.n {
		return 0, false
	}
	return int(i), true
}

// All returns an iterator over the indices the caller claims, in increasing
// order, until every index is handed out. Ranging over it in every copy
// visits each index once in all; breaking out leaves the rest to the others.
func (s *Sequential) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for {
			i, ok := s.claim()
			if !ok || !yield(i) {
				return
			}
		}
	}
}

// Reset makes the Sequential hand out 0..k-1 again. It panics if k is
// negative. It must not run concurrently with All's iterations: call it between runs.
func (s *Sequential) Reset(k int) {
	if k < 0 {
		panic(fmt.Sprintf("claim: Sequential.Reset: negative count %d", k))
	}
	s.n = int64(k)
	s.next.Store(0)
}
