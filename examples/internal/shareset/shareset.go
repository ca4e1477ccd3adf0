// Package shareset holds the user-level "run on the set if it is free, else
// on the caller" rule (TryRun) that the library's concurrent-runs mode
// generalizes, kept as the examples' reference variant. The sets the
// examples share come from workers.Acquire, which has that mode built in.
package shareset

import "sync/atomic"

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
