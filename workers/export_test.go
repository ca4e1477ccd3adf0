package workers

// SharedSets returns the number of names in the shared-set registry.
func SharedSets() int {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return len(shared.sets)
}
