package steal

import (
	"testing"

	"github.com/workgang/workgang/internal/spin"
)

// TestTerminatorSpinFollowsThePolicy: whether waiters spin is what the wait
// policy allows (GOMAXPROCS above 1 and, with the load hint on, no other
// process waiting for the CPUs), whatever the number of workers against
// GOMAXPROCS.
func TestTerminatorSpinFollowsThePolicy(t *testing.T) {
	for _, tc := range []struct {
		procs     int
		contended bool
		n         int
		want      bool
	}{
		{2, false, 2, true},
		{2, false, 64, true}, // more workers than processors: still spins
		{1, false, 2, false},
		{2, true, 2, false},
		{8, true, 1, false},
	} {
		if tc.contended && !spin.On(spin.Load) {
			tc.want = tc.procs > 1 // WORKGANG_WAIT=plain: the load is not read
		}
		restore := spin.ForceView(tc.procs, tc.contended)
		term := NewTerminator(tc.n, func() bool { return false })
		restore()
		if term.spin != tc.want {
			t.Errorf("procs %d, contended %v, %d workers: spin = %v; want %v", tc.procs, tc.contended, tc.n, term.spin, tc.want)
		}
	}
}
