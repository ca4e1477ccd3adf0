package steal

import (
	"slices"
	"testing"
)

// TestDequeRetiredArraysNeverWritten checks rule 3 of the deque doc ("an
// array is never reused ... the owner never writes the old one again"), which
// is what makes a stalled thief's read of a retired array race-free. The
// concurrent tests can hit it only by luck; this single-goroutine test checks
// the property directly: every retired array keeps, bit for bit, the contents
// it had when it was replaced, through later pushes, batch pushes, pops
// (clearing and last-value), steals and Clear (which writes the current array
// only).
func TestDequeRetiredArraysNeverWritten(t *testing.T) {
	var d deque[int]
	type retired struct {
		a    *slots[int]
		snap []int
	}
	var old []retired
	rng := uint64(12345)
	next := func(k uint64) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % k)
	}
	v := 1
	note := func(before *slots[int], snap []int) {
		if after := d.arr.Load(); before != nil && after != before {
			if snap == nil {
				t.Fatalf("test bug: renewal without a snapshot")
			}
			old = append(old, retired{before, snap})
		}
	}
	for range 100000 {
		before := d.arr.Load()
		var snap []int
		// Only a push that reaches the end of the array renews it, so a
		// snapshot is needed only near the end (a batch is at most 40).
		if before != nil && d.bottom.Load()-before.base+40 >= int64(len(before.v)) {
			snap = slices.Clone(before.v)
		}
		switch next(4) {
		case 0:
			d.Push(v)
			v++
		case 1:
			vs := make([]int, 1+next(40))
			for i := range vs {
				vs[i] = v
				v++
			}
			d.PushSlice(vs)
		case 2:
			for range 1 + next(16) {
				d.Pop()
			}
		case 3:
			for range 1 + next(16) {
				d.Steal()
			}
		}
		if next(100) == 0 {
			d.Clear()
		}
		note(before, snap)
	}
	if len(old) < 5 {
		t.Fatalf("only %d renewals; the test did not exercise rule 3", len(old))
	}
	for i, r := range old {
		if !slices.Equal(r.a.v, r.snap) {
			t.Fatalf("retired array %d (base %d) was written after it was replaced", i, r.a.base)
		}
	}
	t.Logf("%d retired arrays checked", len(old))
}
