package workers

// SharedSets returns the number of names in the shared-set registry.
func SharedSets() int {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return len(shared.sets)
}

// CoordinatorParked reports whether the coordinator of the set's current run
// sleeps in its end wait (it spun for its budget first).
func CoordinatorParked(w *Workers) bool { return w.d.CoordinatorParked() }

// Queued returns the number of goroutines waiting in the set's run-lock line.
func Queued(w *Workers) int { return w.mu.queued() }
