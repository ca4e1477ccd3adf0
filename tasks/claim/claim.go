// Package claim is an advanced building block, for runtimes that split their
// parallel phases into pieces themselves (most loops want workers.ForRange):
// it hands pieces of a phase to the copies of a task so that each piece runs
// exactly once, whichever copy gets there first.
//
// Subtasks is a fixed set of k independent subtasks that every copy tries to
// claim (HotSpot's SubTasksDone): copy w calls TryClaim(i) for each i and runs
// the subtasks it won. Sequential hands out the indices 0..k-1 in order
// (HotSpot's SequentialSubTasksDone): each copy calls Next until it reports
// false. Both are allocation-free and lock-free; both are meant to be reset by
// the coordinator between runs, never during one.
//
// A claim belongs to one run. Package workers returns from Run only after
// every copy has returned, so a Reset made after Run returned cannot be
// observed by a late copy of the previous run; code that hands copies out
// some other way must give the same guarantee.
//
// The package imports only the standard library.
package claim

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync/atomic"
)

// Subtasks is a set of k subtasks, each claimed at most once. Create one with
// NewSubtasks. TryClaim is safe for concurrent use; Reset is not (call it
// between runs). A Subtasks must not be copied after first use.
//
// Memory model: a TryClaim that returns true is synchronized after the Reset
// (or NewSubtasks) that preceded the run, and nothing else: the winner of a
// subtask gets no ordering with the losers beyond what the run gives.
type Subtasks struct {
	// claimed[i] flips from false to true exactly once per run: the winning
	// CompareAndSwap. Subtasks are claimed once each, so neighbouring flags
	// sharing a cache line cost one miss per claim at most; padding each
	// flag to a line would cost memory for nothing.
	claimed []atomic.Bool
}

// NewSubtasks returns a set of k unclaimed subtasks, numbered 0..k-1. It
// panics if k is negative.
func NewSubtasks(k int) *Subtasks {
	if k < 0 {
		panic(fmt.Sprintf("claim: NewSubtasks: negative count %d", k))
	}
	return &Subtasks{claimed: make([]atomic.Bool, k)}
}

// Len returns the number of subtasks.
func (s *Subtasks) Len() int { return len(s.claimed) }

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

// All returns an iterator over the subtasks the caller claims: it tries each
// index in order and yields those it won. Ranging over it in every copy runs
// each subtask once in all:
//
//	for i := range subtasks.All() {
//		run(i)
//	}
func (s *Subtasks) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range s.claimed {
			if s.TryClaim(i) && !yield(i) {
				return
			}
		}
	}
}

// Claimed reports whether subtask i has been claimed in this run.
func (s *Subtasks) Claimed(i int) bool { return s.claimed[i].Load() }

// Unclaimed returns the indices of the subtasks nobody claimed, in increasing
// order, or nil if all were claimed. Call it after the run.
func (s *Subtasks) Unclaimed() []int {
	var left []int
	for i := range s.claimed {
		if !s.claimed[i].Load() {
			left = append(left, i)
		}
	}
	return left
}

// Check returns nil if every subtask was claimed, and otherwise an error that
// names the subtasks that were skipped. Call it after the run.
func (s *Subtasks) Check() error {
	left := s.Unclaimed()
	if left == nil {
		return nil
	}
	return &SkippedError{Skipped: left, Total: len(s.claimed)}
}

// Reset marks every subtask unclaimed again. It must not run concurrently with
// TryClaim: call it between runs.
func (s *Subtasks) Reset() {
	for i := range s.claimed {
		s.claimed[i].Store(false)
	}
}

// SkippedError reports subtasks that no copy claimed.
type SkippedError struct {
	Skipped []int // indices never claimed, in increasing order
	Total   int   // the number of subtasks
}

// Error lists the skipped subtasks.
func (e *SkippedError) Error() string {
	var b strings.Builder
	b.WriteString("claim: ")
	b.WriteString(strconv.Itoa(len(e.Skipped)))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(e.Total))
	b.WriteString(" subtasks never claimed: ")
	for i, k := range e.Skipped {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(k))
	}
	return b.String()
}

// Sequential hands out the indices 0..k-1 in increasing order, each to exactly
// one caller of Next. Create one with NewSequential; the zero value has no
// indices. Next is safe for concurrent use; Reset is not (call it between
// runs). A Sequential must not be copied after first use.
//
// Memory model: as for Subtasks, a claim orders nothing beyond the run.
type Sequential struct {
	// next is the single contended word: every claim is one fetch-and-add
	// on it. The pads keep it on a cache line of its own, so neighbours in an
	// enclosing struct do not bounce with it.
	_    [cacheLine]byte
	next atomic.Int64
	n    int64 // read-only during a run
	_    [cacheLine - 16]byte
}

// cacheLine is the padding unit: 128 bytes covers the adjacent-line
// prefetcher of x86 and the 128-byte lines of some arm64 parts.
const cacheLine = 128

// NewSequential returns a Sequential that hands out 0..k-1. It panics if k is
// negative.
func NewSequential(k int) *Sequential {
	s := new(Sequential)
	s.Reset(k)
	return s
}

// Len returns k, the number of indices handed out per run.
func (s *Sequential) Len() int { return int(s.n) }

// Next claims the next index. It returns (i, true) for each i in 0..k-1 once
// over all callers, in increasing order of the claims, and (0, false) once
// they are gone.
func (s *Sequential) Next() (int, bool) {
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

// All returns an iterator over the indices the caller claims, calling Next
// until it reports false.
func (s *Sequential) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for {
			i, ok := s.Next()
			if !ok || !yield(i) {
				return
			}
		}
	}
}

// Claimed returns how many indices have been handed out so far (at most k).
func (s *Sequential) Claimed() int { return int(min(s.next.Load(), s.n)) }

// Reset makes the Sequential hand out 0..k-1 again. It panics if k is
// negative. It must not run concurrently with Next: call it between runs.
func (s *Sequential) Reset(k int) {
	if k < 0 {
		panic(fmt.Sprintf("claim: Sequential.Reset: negative count %d", k))
	}
	s.n = int64(k)
	s.next.Store(0)
}
