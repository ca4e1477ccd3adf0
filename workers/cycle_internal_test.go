package workers

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func registered() int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return len(registry.sets)
}

// TestRegistryForgetsDroppedSets: every set is registered from New, but a
// set dropped without Close (it never created a worker) is still collected,
// and the registry does not grow with such sets.
func TestRegistryForgetsDroppedSets(t *testing.T) {
	kept := New("registry-kept", 1)
	defer kept.Close()
	// Without pruning, 20 rounds of 1000 dropped sets would leave 20000
	// entries; with it, the map stays within twice the sets not yet
	// collected at the last pruning (at most a round's) plus a round.
	const rounds, each = 20, 1000
	for range rounds {
		for range each {
			New("registry-dropped", 1)
		}
		runtime.GC()
	}
	assert.Less(t, registered(), rounds*each/2, "dropped sets are pruned")
	c := New("registry-closed", 1)
	n := registered()
	c.Close()
	assert.Equal(t, n-1, registered(), "Close unregisters")
}
