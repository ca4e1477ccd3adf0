package claim

import (
	"testing"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/testutil"
)

// TestSequentialLayout: next, the word every claim writes, and n, read with
// it, have line 1 to themselves, a whole pad.CacheLine after the struct's
// start and before its end.
func TestSequentialLayout(t *testing.T) {
	var s Sequential
	testutil.OnLine(t, testutil.Line{Name: "next", Offset: unsafe.Offsetof(s.next), Size: unsafe.Sizeof(s.next)}, 1)
	testutil.OnLine(t, testutil.Line{Name: "n", Offset: unsafe.Offsetof(s.n), Size: unsafe.Sizeof(s.n)}, 1)
	testutil.WholeLines(t, "Sequential", unsafe.Sizeof(s))
	if got, want := unsafe.Sizeof(s), uintptr(2*pad.CacheLine); got != want {
		t.Errorf("Sizeof(Sequential) = %d; want two lines, %d", got, want)
	}
}
