package phases

import (
	"testing"
	"unsafe"

	"github.com/workgang/workgang/internal/testutil"
)

// TestSlotLayout: a slot is one whole pad.CacheLine, so the values of two
// workers, in consecutive slots, start a whole unit apart.
func TestSlotLayout(t *testing.T) {
	var s slot
	testutil.WholeLines(t, "slot", unsafe.Sizeof(s))
	testutil.OnLine(t, testutil.Line{Name: "set", Offset: unsafe.Offsetof(s.set), Size: unsafe.Sizeof(s.set)}, 0)
}
