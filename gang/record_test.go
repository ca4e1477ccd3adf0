package gang_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/gang"
)

// TestRecordKeepsTheFirstPanic: a Record counts every failure, keeps the
// first, lets a panic displace a kept Goexit (never the reverse), and is
// empty after Take, also when many goroutines add at once.
func TestRecordKeepsTheFirstPanic(t *testing.T) {
	var r gang.Record
	assert.Nil(t, r.Take(), "the zero Record is empty")

	goexit := &gang.PanicError{Worker: 1, Goexit: true}
	first := &gang.PanicError{Worker: 2, Value: "first"}
	r.Add(goexit)
	r.Add(first)
	r.Add(&gang.PanicError{Worker: 3, Value: "second"})
	r.Add(&gang.PanicError{Worker: 4, Goexit: true})
	p := r.Take()
	require.Same(t, first, p, "the first panic displaces the Goexit; later failures do not")
	assert.Equal(t, 4, p.Panics, "every failure counted")
	assert.Nil(t, r.Take(), "Take empties the record")

	r.Add(&gang.PanicError{Worker: 5, Goexit: true})
	p = r.Take()
	require.NotNil(t, p)
	assert.True(t, p.Goexit, "a Goexit alone is kept")
	assert.Equal(t, 1, p.Panics, "the count starts again after Take")

	// Many adders at once: one panic among Goexits is the one kept.
	const adders = 64
	var wg sync.WaitGroup
	for i := range adders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Add(&gang.PanicError{Worker: i, Goexit: i != adders/2, Value: i})
		}()
	}
	wg.Wait()
	p = r.Take()
	require.NotNil(t, p)
	assert.False(t, p.Goexit, "the panic displaced every Goexit")
	assert.Equal(t, adders/2, p.Worker)
	assert.Equal(t, adders, p.Panics)
}
