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
	base := registered()
	for range 2000 {
		New("registry-dropped", 1)
	}
	runtime.GC()
	for range 200 {
		New("registry-dropped", 1) // registering prunes collected sets
	}
	assert.Less(t, registered(), base+1000, "dropped sets are pruned")
	c := New("registry-closed", 1)
	n := registered()
	c.Close()
	assert.Equal(t, n-1, registered(), "Close unregisters")
}
