// Package shareset is the one place the examples spell what depends on how
// a worker set serves runs from many goroutines at once: the set interface
// the examples run on and the user-level "run on the set if it is free, else on the caller" rule
// (TryRun) that the library's concurrent-runs mode generalizes. The sets
// the examples share come from workers.Acquire, which gives them that mode
// where the library has it.
//
// Everything that depends on the concurrent-runs API lives here, so that the
// examples change in this file only when that API changes.
package shareset

import (
	"context"
	"sync/atomic"

	"github.com/workgang/workgang/workers"
)

// Set is what the examples run on: a *workers.Workers or a *workers.Shared.
type Set interface {
	Name() string
	MaxWorkers() int
	ForRange(n int, body func(worker, lo, hi int), opts ...workers.RangeOption)
	RunContext(ctx context.Context, n int, fn func(ctx context.Context, worker int) error) error
}

var (
	_ Set = (*workers.Workers)(nil)
	_ Set = (*workers.Shared)(nil)
)

// TryRun runs work on a set only when no other goroutine is running on it
// through the same TryRun, and on the caller otherwise: a user-level
// version of the concurrent-runs mode, kept as a reference. The zero value
// is ready to use; a TryRun must not be copied after first use.
type TryRun struct {
	// busy is true while one goroutine's onSet runs. The CompareAndSwap
	// that sets it is the only way in, so onSet never runs twice at once;
	// the Store that clears it happens after onSet returned.
	busy atomic.Bool
}

// Do calls onSet if no other Do's onSet is running, serial otherwise, and
// reports whether it called onSet. A panic in either propagates; the
// TryRun is free again afterwards.
func (t *TryRun) Do(onSet, serial func()) bool {
	if !t.busy.CompareAndSwap(false, true) {
		serial()
		return false
	}
	defer t.busy.Store(false)
	onSet()
	return true
}
