package gang

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestLayout checks the padding the protocol's cost argument relies on: the
// run line holds only run, runGen and task (written once per run, read by
// every worker), the end line only coordParked, the coordinator's
// per-run fields a line of their own, and what workers read on every run
// (slice headers, the wait policy) a read-mostly line; each worker slot is two whole
// lines (the rarely written state, the per-run claim and counters) and each
// countdown group one, so two workers never write one line.
func TestLayout(t *testing.T) {
	var d Dispatcher
	assert.Equal(t, uintptr(cacheLine), unsafe.Offsetof(d.run), "run word starts after a full pad")
	assert.Less(t, unsafe.Offsetof(d.task)+unsafe.Sizeof(d.task), uintptr(2*cacheLine)+1, "task on the run line")
	assert.Equal(t, uintptr(2*cacheLine), unsafe.Offsetof(d.coordParked), "coordParked starts the end line")
	assert.Less(t, unsafe.Offsetof(d.coordParked)+8, uintptr(3*cacheLine)+1)
	assert.Equal(t, uintptr(3*cacheLine), unsafe.Offsetof(d.gen), "the coordinator's line")
	assert.Equal(t, uintptr(4*cacheLine), unsafe.Offsetof(d.slots), "the read-mostly line")
	assert.Less(t, unsafe.Offsetof(d.policy)+8, uintptr(5*cacheLine)+1)
	assert.Equal(t, uintptr(5*cacheLine), unsafe.Offsetof(d.coordWake), "the coordinator's semaphore on a line of its own")
	assert.GreaterOrEqual(t, unsafe.Offsetof(d.fails), uintptr(6*cacheLine))
	var s slot
	assert.Equal(t, uintptr(2*cacheLine), unsafe.Sizeof(s), "slot size")
	assert.Equal(t, uintptr(cacheLine), unsafe.Offsetof(s.claim), "claim starts the slot's second line")
	assert.Less(t, unsafe.Offsetof(s.sem), uintptr(cacheLine))
	assert.Zero(t, unsafe.Sizeof(group{})%uintptr(cacheLine), "group size %d", unsafe.Sizeof(group{}))
	d2 := New(3)
	assert.Len(t, d2.slots, 3)
	assert.Len(t, d2.groups, 1, "3 workers + caller = 4 copies: one group")
	assert.Len(t, New(8).groups, 2, "8 workers + caller = 9 copies: two groups")
}
