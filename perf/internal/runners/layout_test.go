package runners

import (
	"testing"
	"unsafe"

	"github.com/workgang/workgang/internal/testutil"
)

// TestLayout: the ping-pong's hand-off words are on lines of their own (ping
// with seq, both written by the caller, on line 1; pong, written by the
// partner, on line 2), and the read-only fields after them on line 3. (The
// grain sink's words are tested in package work.)
func TestLayout(t *testing.T) {
	var p pingPong
	testutil.OnLine(t, testutil.Line{Name: "ping", Offset: unsafe.Offsetof(p.ping), Size: unsafe.Sizeof(p.ping)}, 1)
	testutil.OnLine(t, testutil.Line{Name: "seq", Offset: unsafe.Offsetof(p.seq), Size: unsafe.Sizeof(p.seq)}, 1)
	testutil.OnLine(t, testutil.Line{Name: "pong", Offset: unsafe.Offsetof(p.pong), Size: unsafe.Sizeof(p.pong)}, 2)
	testutil.OnLine(t, testutil.Line{Name: "n", Offset: unsafe.Offsetof(p.n), Size: unsafe.Sizeof(p.n)}, 3)
}
