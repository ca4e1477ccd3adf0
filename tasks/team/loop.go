package team

import (
	"fmt"

	"github.com/workgang/workgang/internal/loop"
)

// Schedule says how For shares a loop's iterations out among the members,
// as OpenMP's schedule clause does. The zero Schedule is Static().
type Schedule struct {
	kind  schedKind
	chunk int
}

type schedKind uint8

const (
	static schedKind = iota
	staticChunk
	dynamic
	guided
)

// Static gives each member one contiguous block of about n/Size iterations:
// no shared counter at all, the cheapest schedule for even iterations.
func Static() Schedule { return Schedule{} }

// StaticChunk deals chunks of c iterations out round-robin: member i runs
// chunks i, i+Size, i+2*Size, ... It panics if c < 1.
func StaticChunk(c int) Schedule { return Schedule{staticChunk, checkChunk("StaticChunk", c)} }

// Dynamic lets members claim chunks of c iterations from a shared counter as
// they finish the previous one: for uneven iterations. It panics if c < 1.
func Dynamic(c int) Schedule { return Schedule{dynamic, checkChunk("Dynamic", c)} }

// Guided lets members claim chunks from a shared counter whose size shrinks
// with the iterations left (remaining / (2*Size)), but never below min: big
// chunks first for few claims, small ones at the end for balance. It panics
// if min < 1.
func Guided(min int) Schedule { return Schedule{guided, checkChunk("Guided", min)} }

func checkChunk(op string, c int) int {
	if c < 1 {
		panic(fmt.Sprintf("team: %s: chunk = %d, want >= 1", op, c))
	}
	return c
}

// For runs body over the iterations [0, n) shared out among the members
// according to sched, and returns after a barrier once every member's share
// is done: body(lo, hi) runs iterations lo..hi-1, each iteration exactly once
// over the team, and every body call's writes happen before every member's
// return from For. Every member must call For with the same n and schedule,
// in the same order relative to its other For and Barrier calls, as with
// OpenMP's "omp for". n == 0 runs nothing but still waits at the barrier. Any
// n up to MaxInt works. It panics if n is negative or body is nil.
func (m *Member) For(n int, body func(lo, hi int), sched Schedule) {
	if n < 0 {
		panic(fmt.Sprintf("team: For: n = %d, want >= 0", n))
	}
	if body == nil {
		panic("team: For: nil body")
	}
	t := m.check("For")
	size := t.n
	switch sched.kind {
	case static:
		// Blocks of q or q+1 iterations, the first r members taking one
		// more: lo = id*q + min(id, r) never overflows (it is at most n).
		q, r := n/size, n%size
		lo := m.id*q + min(m.id, r)
		hi := lo + q
		if m.id < r {
			hi++
		}
		if lo < hi {
			body(lo, hi)
		}
	case staticChunk:
		c := sched.chunk
		chunks := loop.CeilDiv(n, c)
		for k := m.id; k < chunks; k += size {
			lo := k * c // k < chunks, so k*c <= n-1
			body(lo, lo+min(c, n-lo))
			if k >= chunks-size {
				break // the next k would pass chunks (and k+size might overflow)
			}
		}
	default:
		// Every member builds the same schedule from the same arguments and
		// claims from the team's one counter (the module's schedule engine,
		// the one ranges.Loop runs); the counter is 0 here, see below.
		var s loop.Schedule
		if sched.kind == dynamic {
			s = loop.Dynamic(n, sched.chunk)
		} else {
			s = loop.Guided(n, sched.chunk, size)
		}
		s.Drain(&t.next, body)
	}
	// The last member to finish its share resets the shared counter before
	// it releases the others, so the next loop claims from 0: nobody reads
	// it between this barrier and the next For.
	m.barrier(t.resetLoop)
}

func (t *Team) resetLoop() { t.next.Store(0) }
