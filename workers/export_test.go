package workers

import "sync"

// SharedSets returns the number of names in the shared-set registry.
func SharedSets() int {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return len(shared.sets)
}

// Queued returns the number of goroutines waiting in the set's run-lock line.
func Queued(w *Workers) int { return w.mu.queued() }

// ResetDefault closes the default set, if made, and forgets it, so that a
// test sees a process that never used Default. Nothing may use it meanwhile.
func ResetDefault() {
	if s := defaultSet.s; s != nil {
		s.close()
	}
	defaultSet.once, defaultSet.s = sync.Once{}, nil
}
