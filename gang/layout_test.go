package gang

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestLayout checks the padding the protocol's cost argument relies on: the
// run word's line holds only run and runGen (written once per run), the end
// line only done and coordParked, both away from the coordinator's private
// fields; each worker slot is two whole lines (the rarely written state, the
// per-run claim and counters) and each countdown group one, so two workers
// never write one line.
func TestLayout(t *testing.T) {
	var d Dispatcher
	assert.Equal(t, uintptr(cacheLine), unsafe.Offsetof(d.run), "run word starts after a full pad")
	assert.Equal(t, uintptr(cacheLine), unsafe.Offsetof(d.runGen)-unsafe.Offsetof(d.run)+cacheLine-8)
	assert.Equal(t, uintptr(2*cacheLine), unsafe.Offsetof(d.done), "done starts the end line")
	assert.Less(t, unsafe.Offsetof(d.coordParked)+8, uintptr(3*cacheLine))
	assert.GreaterOrEqual(t, unsafe.Offsetof(d.task), uintptr(3*cacheLine), "task shares a hot line")
	var s slot
	assert.Equal(t, uintptr(2*cacheLine), unsafe.Sizeof(s), "slot size")
	assert.Equal(t, uintptr(cacheLine), unsafe.Offsetof(s.claim), "claim starts the slot's second line")
	assert.Less(t, unsafe.Offsetof(s.wake), uintptr(cacheLine))
	assert.Zero(t, unsafe.Sizeof(group{})%cacheLine, "group size %d", unsafe.Sizeof(group{}))
	d2 := New(3)
	assert.Len(t, d2.slots, 3)
	assert.Len(t, d2.groups, 1, "3 workers + caller = 4 copies: one group")
	assert.Len(t, New(8).groups, 2, "8 workers + caller = 9 copies: two groups")
}
