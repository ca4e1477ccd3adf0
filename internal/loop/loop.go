// Package loop is the module's one schedule engine: the claim arithmetic of a
// loop over [0, n) whose chunks callers take from a shared counter, with a
// fixed chunk size (OpenMP's dynamic schedule) or chunks that shrink as the
// loop drains (its guided schedule). tasks/ranges keeps a Schedule next to
// its counter (the loop of workers.ForRange and ranges.Task); tasks/team
// gives every member its own copy of the Schedule and shares only the counter,
// which its barrier resets between loops.
//
// The package imports only the standard library.
package loop

import "sync/atomic"

// Schedule is the read-only part of a loop: its length and how it is cut
// into chunks. The zero Schedule is an empty loop. The counter it claims
// from starts at 0; it counts chunks for a dynamic schedule and iterations
// for a guided one, so that every bound below stays in range for any n and
// chunk up to MaxInt.
type Schedule struct {
	n      uint64 // <= MaxInt64
	chunk  uint64 // dynamic: the chunk size; guided: the smallest chunk
	chunks uint64 // dynamic: ceil(n / chunk); guided: ceil(n / minChunk), a bound
	div    uint64 // guided: 2*copies (>= 2); 0 for a dynamic schedule
}

// Dynamic returns the schedule of a loop over [0, n) in chunks of chunk
// iterations. It needs n >= 0 and chunk >= 1.
func Dynamic(n, chunk int) Schedule {
	s := Schedule{n: uint64(n), chunk: uint64(chunk)}
	s.chunks = CeilDiv(s.n, s.chunk)
	return s
}

// Guided returns the schedule of a loop over [0, n) whose claims take
// max(minChunk, remaining/(2*copies)) iterations (fewer only at the end). It
// needs n >= 0, minChunk >= 1 and copies >= 1.
func Guided(n, minChunk, copies int) Schedule {
	// copies <= MaxInt64, so 2*copies fits in a uint64.
	s := Schedule{n: uint64(n), chunk: uint64(minChunk), div: 2 * uint64(copies)}
	s.chunks = CeilDiv(s.n, s.chunk)
	return s
}

// Chunks returns the number of chunks (for a guided schedule a bound on it):
// the most claimers that can get any work.
func (s *Schedule) Chunks() int { return int(s.chunks) }

// Next claims the next chunk from next, the loop's shared counter, and
// returns its bounds, lo < hi <= n, with ok true; once every iteration is
// claimed it returns ok false, however often it is called. Over all callers
// sharing next (each with an equal Schedule) every iteration of [0, n) lies in
// exactly one chunk returned.
//
// Claiming orders nothing beyond the counter: the chunks' writes are
// published by whatever runs the claimers.
func (s *Schedule) Next(next *atomic.Uint64) (lo, hi int, ok bool) {
	if s.div != 0 {
		return s.nextGuided(next)
	}
	return s.nextDynamic(next)
}

// Drain claims chunks as Next does and calls body for each until the loop is
// drained, with the claims inlined into its loop: for a caller that drains a
// loop with a func body anyway (tasks/team's For), it saves Next's call per
// claim.
func (s *Schedule) Drain(next *atomic.Uint64, body func(lo, hi int)) {
	if s.div != 0 {
		for {
			lo, hi, ok := s.nextGuided(next)
			if !ok {
				return
			}
			body(lo, hi)
		}
	}
	for {
		lo, hi, ok := s.nextDynamic(next)
		if !ok {
			return
		}
		body(lo, hi)
	}
}

func (s *Schedule) nextDynamic(next *atomic.Uint64) (lo, hi int, ok bool) {
	// The Add is the claim: it returns distinct, increasing chunk indices
	// to concurrent callers. Chunk i < chunks starts at i*chunk <= n-1, and
	// n - start bounds its length, so nothing below can overflow; next
	// grows by one per claim, so it could wrap only after 2^64 claims.
	i := next.Add(1) - 1
	if i >= s.chunks {
		return 0, 0, false
	}
	start := i * s.chunk
	return int(start), int(start + min(s.chunk, s.n-start)), true
}

func (s *Schedule) nextGuided(next *atomic.Uint64) (lo, hi int, ok bool) {
	for {
		// The CAS is the claim: of the callers that read the same cur, one
		// moves next past its chunk and the others retry from the new value,
		// so chunks are disjoint and, together, cover [0, n). next only
		// grows, never past n: cur <= n and size <= n - cur, so nothing
		// overflows and a drained loop stays drained.
		cur := next.Load()
		if cur >= s.n {
			return 0, 0, false
		}
		rem := s.n - cur
		size := min(max(s.chunk, rem/s.div), rem)
		if next.CompareAndSwap(cur, cur+size) {
			return int(cur), int(cur + size), true
		}
	}
}

// Claimed returns how many iterations the counter value next stands for (at
// most n).
func (s *Schedule) Claimed(next uint64) int {
	if s.div != 0 {
		return int(min(next, s.n))
	}
	// min(next, chunks) * chunk < n + chunk <= 2^64 - 2: no overflow.
	return int(min(min(next, s.chunks)*s.chunk, s.n))
}

// CeilDiv returns ceil(a / b) for a >= 0, b >= 1 with one division and
// without forming a + b - 1, which overflows near the type's maximum. It is
// the module's one rounding-up division.
func CeilDiv[T int | uint64](a, b T) T {
	if a == 0 {
		return 0
	}
	return (a-1)/b + 1
}
