package ranges

import (
	"testing"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/testutil"
)

// TestLoopLayout: next, the word every claim writes, shares line 1 only with
// the read-only bounds every claim reads (n, chunk, chunks), a whole
// pad.CacheLine after the struct's start and before its end.
func TestLoopLayout(t *testing.T) {
	var l Loop
	for _, f := range []testutil.Line{
		{Name: "next", Offset: unsafe.Offsetof(l.next), Size: unsafe.Sizeof(l.next)},
		{Name: "n", Offset: unsafe.Offsetof(l.n), Size: unsafe.Sizeof(l.n)},
		{Name: "chunk", Offset: unsafe.Offsetof(l.chunk), Size: unsafe.Sizeof(l.chunk)},
		{Name: "chunks", Offset: unsafe.Offsetof(l.chunks), Size: unsafe.Sizeof(l.chunks)},
	} {
		testutil.OnLine(t, f, 1)
	}
	if got, want := unsafe.Sizeof(l), uintptr(2*pad.CacheLine); got != want {
		t.Errorf("Sizeof(Loop) = %d; want two lines, %d", got, want)
	}
}
