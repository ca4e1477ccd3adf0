package steal

import (
	"testing"
	"unsafe"

	"github.com/workgang/workgang/internal/testutil"
)

// field describes a field for the layout checks.
func field(name string, off, size uintptr) testutil.Line {
	return testutil.Line{Name: name, Offset: off, Size: size}
}

// TestDequeLayout: top, written by every steal, has line 1 to itself; bottom
// and arr, written only by the owner, share line 2.
func TestDequeLayout(t *testing.T) {
	var d deque[int]
	testutil.OnLine(t, field("top", unsafe.Offsetof(d.top), unsafe.Sizeof(d.top)), 1)
	testutil.OnLine(t, field("bottom", unsafe.Offsetof(d.bottom), unsafe.Sizeof(d.bottom)), 2)
	testutil.OnLine(t, field("arr", unsafe.Offsetof(d.arr), unsafe.Sizeof(d.arr)), 2)
	testutil.WholeLines(t, "deque", unsafe.Sizeof(d))
}

// TestTerminatorLayout: offered, polled by spinning waiters, has line 1 to
// itself; master and sleeping, written by waiters, line 2; the read-mostly
// rest starts at line 3.
func TestTerminatorLayout(t *testing.T) {
	var term Terminator
	testutil.OnLine(t, field("offered", unsafe.Offsetof(term.offered), unsafe.Sizeof(term.offered)), 1)
	testutil.OnLine(t, field("master", unsafe.Offsetof(term.master), unsafe.Sizeof(term.master)), 2)
	testutil.OnLine(t, field("sleeping", unsafe.Offsetof(term.sleeping), unsafe.Sizeof(term.sleeping)), 2)
	testutil.OnLine(t, field("aborted", unsafe.Offsetof(term.aborted), unsafe.Sizeof(term.aborted)), 3)
}

// TestSetLayout: hungry has line 1 to itself, the read-only slice headers
// follow on line 2; each worker's thief and Local state is a whole number of
// lines, so consecutive workers' states start whole lines apart.
func TestSetLayout(t *testing.T) {
	var s Set[int]
	testutil.OnLine(t, field("hungry", unsafe.Offsetof(s.hungry), unsafe.Sizeof(s.hungry)), 1)
	testutil.OnLine(t, field("queues", unsafe.Offsetof(s.queues), unsafe.Sizeof(s.queues)), 2)
	testutil.WholeLines(t, "thief", unsafe.Sizeof(thief{}))
	testutil.WholeLines(t, "Local", unsafe.Sizeof(Local[int]{}))
}
