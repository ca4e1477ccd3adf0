package loop

import (
	"math"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCeilDiv(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{0, 1, 0}, {1, 1, 1}, {7, 3, 3}, {9, 3, 3}, {10, 3, 4},
		{math.MaxInt, 1, math.MaxInt}, {math.MaxInt, 2, math.MaxInt/2 + 1}, {math.MaxInt, math.MaxInt, 1},
	} {
		if got := CeilDiv(tc.a, tc.b); got != tc.want {
			t.Errorf("CeilDiv(%d, %d) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := CeilDiv(uint64(math.MaxUint64), 2); got != 1<<63 {
		t.Errorf("CeilDiv(MaxUint64, 2) = %d; want 2^63", got)
	}
}

// Copies that each build their own Schedule from the same arguments and
// claim from one shared counter (as tasks/team's members do) cover [0, n)
// exactly once, for both kinds of schedule.
func TestPrivateSchedulesSharedCounter(t *testing.T) {
	const n, copies = 10007, 4
	for name, mk := range map[string]func() Schedule{
		"dynamic": func() Schedule { return Dynamic(n, 7) },
		"guided":  func() Schedule { return Guided(n, 3, copies) },
	} {
		var next atomic.Uint64
		hits := make([]atomic.Int32, n)
		testutil.RunCopies(copies, func(int) {
			s := mk()
			for {
				lo, hi, ok := s.Next(&next)
				if !ok {
					return
				}
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			}
		})
		for i := range hits {
			if got := hits[i].Load(); got != 1 {
				t.Fatalf("%s: iteration %d ran %d times; want 1", name, i, got)
			}
		}
		s := mk()
		if got := s.Claimed(next.Load()); got != n {
			t.Errorf("%s: Claimed = %d; want %d", name, got, n)
		}
	}
}
