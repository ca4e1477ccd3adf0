package gang

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestLayout checks the padding the protocol's cost argument relies on: the
// run word's line holds only the words every run writes once (run, runGen,
// done, coordParked), away from the coordinator's private fields; each worker
// slot and each countdown group is a whole multiple of the padding unit, so
// two workers never write one line.
func TestLayout(t *testing.T) {
	var d Dispatcher
	assert.Equal(t, uintptr(cacheLine), unsafe.Offsetof(d.run), "run word starts after a full pad")
	assert.Less(t, unsafe.Offsetof(d.coordParked)+8, uintptr(2*cacheLine))
	assert.GreaterOrEqual(t, unsafe.Offsetof(d.task), uintptr(2*cacheLine), "task shares the run word's line")
	assert.Zero(t, unsafe.Sizeof(slot{})%cacheLine, "slot size %d", unsafe.Sizeof(slot{}))
	assert.Zero(t, unsafe.Sizeof(group{})%cacheLine, "group size %d", unsafe.Sizeof(group{}))
	d2 := New(3)
	assert.Len(t, d2.slots, 3)
	assert.Len(t, d2.groups, 1, "3 workers + caller = 4 copies: one group")
	assert.Len(t, New(8).groups, 2, "8 workers + caller = 9 copies: two groups")
}
