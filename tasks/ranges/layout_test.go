package ranges

import (
	"testing"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/testutil"
)

// TestLoopLayout: next, the word every claim writes, shares line 1 only with
// the read-only schedule every claim reads, a whole pad.CacheLine after the
// struct's start and before its end.
func TestLoopLayout(t *testing.T) {
	var l Loop
	for _, f := range []testutil.Line{
		{Name: "next", Offset: unsafe.Offsetof(l.next), Size: unsafe.Sizeof(l.next)},
		{Name: "s", Offset: unsafe.Offsetof(l.s), Size: unsafe.Sizeof(l.s)},
	} {
		testutil.OnLine(t, f, 1)
	}
	if got, want := unsafe.Sizeof(l), uintptr(2*pad.CacheLine); got != want {
		t.Errorf("Sizeof(Loop) = %d; want two lines, %d", got, want)
	}
}
