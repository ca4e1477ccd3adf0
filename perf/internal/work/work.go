// Package work is the CPU work the perf sections time: a chain of xorshift
// steps that the compiler can neither remove nor shorten and that touches no
// memory, calibrated in nanoseconds per step, and split into copies.
//
// A section sizes its work in time (W ns in all, split over n copies) and
// turns it into steps with the cost Calibrate measured, so that every
// implementation of a section runs exactly the same steps.
package work

import (
	"math"
	"runtime"
	"time"

	"github.com/workgang/workgang/internal/pad"
)

// Grain is a task of W total work split across n copies.
type Grain struct {
	units int          // units of work per copy
	sink  []PaddedWord // one result per copy, so the work cannot be removed
}

// PaddedWord is a word on a cache line of its own.
type PaddedWord struct {
	V uint64
	_ [pad.CacheLine - 8]byte
}

// NewGrain returns the work of w ns split across n copies, at nsPerUnit ns
// per step of Burn.
func NewGrain(n int, w, nsPerUnit float64) *Grain {
	units := max(1, int(math.Round(w/nsPerUnit/float64(n))))
	return &Grain{units: units, sink: make([]PaddedWord, n)}
}

// Work is copy i's share.
func (g *Grain) Work(i int) { g.sink[i].V = Burn(g.units) }

// Burn runs units steps of a xorshift generator and returns its state: real
// CPU work that the compiler can neither remove (the result is stored) nor
// shorten (every step depends on the previous one), touching no memory.
func Burn(units int) uint64 {
	x := uint64(units)*0x9E3779B97F4A7C15 | 1
	for range units {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// Calibrate returns the cost of one unit of Burn in nanoseconds: the best of
// a few timings of about a millisecond each (the best is the least
// disturbed).
func Calibrate() float64 {
	const units = 1 << 20
	best := time.Duration(math.MaxInt64)
	for range 7 {
		start := time.Now()
		runtime.KeepAlive(Burn(units)) // a use of the result: the work stays
		best = min(best, time.Since(start))
	}
	return float64(best) / units
}

// Block returns the indices of copy i of c over n: contiguous, sizes
// differing by at most one.
func Block(i, c, n int) (lo, hi int) { return i * n / c, (i + 1) * n / c }
