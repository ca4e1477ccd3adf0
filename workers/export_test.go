package workers

// SharedSets returns the number of names in the shared-set registry.
func SharedSets() int {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return len(shared.sets)
}

// Queued returns the number of goroutines waiting in the set's run-lock line.
func Queued(w *Workers) int { return w.mu.queued() }
