package ranges

import (
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/workgang/workgang/internal/pad"
)

// Guided is a loop over [0, n) handed out in shrinking chunks: each claim
// takes max(minChunk, remaining/(2*copies)) iterations (fewer only at the
// end), OpenMP's schedule(guided). Early claims are large, so a loop of even
// iterations costs few claims; late claims are small, so copies that start
// late or run slow are made up for at the end. The zero value is an empty
// loop; Reset (or NewGuided) gives it a length. Next and the iterators are
// safe for concurrent use; Reset is not (call it between runs). A Guided must
// not be copied after first use.
//
// Memory model: claiming orders nothing, as for Loop.
type Guided struct {
	// next is the first unclaimed iteration (not a chunk index: chunk sizes
	// depend on what is left). It only grows, by CAS, and never past n, so
	// no sum below can overflow for any n <= MaxInt, and a drained loop
	// stays drained however often it is claimed from. The read-only fields
	// share its line, as in Loop.
	_        pad.Line
	next     atomic.Uint64
	n        uint64 // read-only during a run; <= MaxInt64
	minChunk uint64 // read-only during a run; >= 1 once Reset
	div      uint64 // 2*copies; read-only during a run; >= 2 once Reset
	_        [pad.CacheLine - 32]byte
}

// NewGuided returns a guided loop over [0, n) for the given number of
// copies, whose chunks are never smaller than minChunk (except the last).
// It panics if n is negative, minChunk < 1 or copies < 1.
func NewGuided(n, minChunk, copies int) *Guided {
	g := new(Guided)
	g.Reset(n, minChunk, copies)
	return g
}

// Reset makes g a fresh guided loop over [0, n) (see NewGuided). It must not
// run concurrently with Next.
func (g *Guided) Reset(n, minChunk, copies int) {
	switch {
	case n < 0:
		panic(fmt.Sprintf("ranges: Guided.Reset: negative length %d", n))
	case minChunk < 1:
		panic(fmt.Sprintf("ranges: Guided.Reset: minChunk = %d, want >= 1", minChunk))
	case copies < 1:
		panic(fmt.Sprintf("ranges: Guided.Reset: copies = %d, want >= 1", copies))
	}
	// copies <= MaxInt64, so 2*copies fits in a uint64.
	g.n, g.minChunk, g.div = uint64(n), uint64(minChunk), 2*uint64(copies)
	g.next.Store(0)
}

// Len returns n, the number of iterations of the loop.
func (g *Guided) Len() int { return int(g.n) }

// MinChunk returns the smallest chunk size (0 for a zero Guided).
func (g *Guided) MinChunk() int { return int(g.minChunk) }

// MaxChunks returns ceil(n / minChunk), a bound on the number of chunks the
// loop is split into and so on the copies that can get any work.
func (g *Guided) MaxChunks() int {
	if g.minChunk == 0 {
		return 0
	}
	return int(ceilDiv(g.n, g.minChunk))
}

// Next claims the next chunk and returns its bounds, lo < hi <= n, with ok
// true; once every iteration is claimed it returns ok false, however often it
// is called. Each iteration of [0, n) lies in exactly one chunk returned over
// all callers.
func (g *Guided) Next() (lo, hi int, ok bool) {
	for {
		// The CAS is the claim: of the callers that read the same cur, one
		// moves next past its chunk and the others retry from the new value,
		// so chunks are disjoint and, together, cover [0, n). cur <= n and
		// size <= n - cur, so cur + size <= n: nothing overflows.
		cur := g.next.Load()
		if cur >= g.n {
			return 0, 0, false
		}
		rem := g.n - cur
		size := min(max(g.minChunk, rem/g.div), rem)
		if g.next.CompareAndSwap(cur, cur+size) {
			return int(cur), int(cur + size), true
		}
	}
}

// Chunks returns an iterator over the chunks the caller claims, as (lo, hi)
// pairs, until the loop is drained.
func (g *Guided) Chunks() iter.Seq2[int, int] {
	return func(yield func(lo, hi int) bool) {
		for {
			lo, hi, ok := g.Next()
			if !ok || !yield(lo, hi) {
				return
			}
		}
	}
}

// Claimed returns how many iterations have been claimed so far (at most n).
func (g *Guided) Claimed() int { return int(min(g.next.Load(), g.n)) }
