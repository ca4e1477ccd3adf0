package team

import (
	"testing"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/testutil"
)

// TestLayout: the barrier word, which every arrival writes, and the loop's
// claim counter each have a line of their own (lines 0 and 1); the sleepers'
// slow-path state starts line 2, a whole line before the read-mostly fields;
// a Member is one whole line, so consecutive
// members' spin state and live flag start a whole line apart.
func TestLayout(t *testing.T) {
	var tm Team
	testutil.OnLine(t, testutil.Line{Name: "bar", Offset: unsafe.Offsetof(tm.bar), Size: unsafe.Sizeof(tm.bar)}, 0)
	testutil.OnLine(t, testutil.Line{Name: "next", Offset: unsafe.Offsetof(tm.next), Size: unsafe.Sizeof(tm.next)}, 1)
	testutil.OnLine(t, testutil.Line{Name: "mu", Offset: unsafe.Offsetof(tm.mu), Size: unsafe.Sizeof(tm.mu)}, 2)
	testutil.OnLine(t, testutil.Line{Name: "sleepers", Offset: unsafe.Offsetof(tm.sleepers), Size: unsafe.Sizeof(tm.sleepers)}, 2)
	if gap := unsafe.Offsetof(tm.n) - (unsafe.Offsetof(tm.reported) + unsafe.Sizeof(tm.reported)); gap < uintptr(pad.CacheLine) {
		t.Errorf("the read-mostly fields start %d bytes after the sleepers' state; want at least pad.CacheLine = %d", gap, pad.CacheLine)
	}
	var m Member
	testutil.WholeLines(t, "Member", unsafe.Sizeof(m))
}
