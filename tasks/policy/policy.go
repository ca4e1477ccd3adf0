// Package policy is an advanced building block, for runtimes that size their
// worker set and each phase's copies themselves (most programs pass
// runtime.GOMAXPROCS(0) to workers.New and stop there): it chooses how many
// workers to use, a default maximum from the CPU count and an active count
// that follows the amount of work from one phase to the next (HotSpot's
// WorkerPolicy).
//
// Default() is every CPU up to 8, and 8 plus 5/8 of the CPUs beyond 8:
// parallel phases such as marking stop scaling linearly well before the
// CPU count on large machines, and leaving some CPUs to the rest of the
// program costs little.
//
// An Active policy turns an amount of work into an active count: enough
// workers that each gets at least WorkPerWorker units, capped by Max. It grows
// at once when the work grows, and shrinks by halves toward the need when it
// falls, so that a single light phase between heavy ones does not throw
// away workers that the next phase needs (the workers stay created; only the
// count of copies per run moves).
//
//	p := policy.Active{WorkPerWorker: 10000, Max: w.MaxWorkers()}
//	w.SetActiveWorkers(p.Next(len(roots)))
//
// The package imports only the standard library and the module's internal
// rounding helper.
package policy

import (
	"fmt"
	"runtime"

	"github.com/workgang/workgang/internal/loop"
)

// defaultFor returns the default maximum number of workers for ncpu CPUs:
// ncpu when ncpu <= 8, and 8 + (ncpu-8)*5/8 otherwise. It returns 1 when ncpu
// < 1.
func defaultFor(ncpu int) int {
	switch {
	case ncpu < 1:
		return 1
	case ncpu <= 8:
		return ncpu
	default:
		return 8 + (ncpu-8)*5/8
	}
}

// Default returns the default maximum number of workers for the CPUs this
// process may run Go code on at once, runtime.GOMAXPROCS(0) (which, since Go
// 1.25, respects a container's CPU limit): all of them up to 8, and 8 plus
// 5/8 of those beyond 8.
func Default() int { return defaultFor(runtime.GOMAXPROCS(0)) }

// Active chooses the active worker count for successive phases. The zero
// value uses one unit of work per worker and Default as the cap,
// and has no history (its first Next returns what the work alone asks for). An Active is not safe for
// concurrent use: it is meant for the goroutine that starts the runs.
type Active struct {
	// WorkPerWorker is the least work worth one worker; values below 1
	// mean 1.
	WorkPerWorker int
	// Max caps the count; 0 means Default().
	Max int

	last int // the count returned last, 0 before the first call
}

// need returns the count the work alone asks for, without history:
// ceil(work / WorkPerWorker), clamped to [1, Max].
func (a *Active) need(work int) int {
	if work < 0 {
		panic(fmt.Sprintf("policy: Active.Next: negative work %d", work))
	}
	return min(max(1, loop.CeilDiv(work, max(1, a.WorkPerWorker))), a.limit())
}

func (a *Active) limit() int {
	if a.Max > 0 {
		return a.Max
	}
	return Default()
}

// Next returns the active count for a phase with the given amount of work and
// remembers it: the count the work alone asks for, ceil(work /
// WorkPerWorker) clamped to [1, Max], if that is at least the last count (grow
// at once), otherwise halfway from the last count down to the need, rounding
// toward the need (shrink by halves). It panics if work is negative.
func (a *Active) Next(work int) int {
	need := a.need(work)
	n := need
	if a.last > need {
		// Halve the distance: last=8, need=1 gives 4, 2, 1 on successive
		// calls. (last+need)/2 rounds down, so a distance of 1 closes.
		n = (a.last + need) / 2
	}
	a.last = min(n, a.limit())
	return a.last
}
