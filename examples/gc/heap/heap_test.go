package heap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNew(t *testing.T) {
	h := heap.New(mark.Random, 1000, 1)
	assert.Equal(t, 1000, h.Slots())
	assert.Empty(t, h.Fields(heap.Null))
	assert.Equal(t, uint32(heap.Null), h.Roots()[0])
	assert.Equal(t, 751, h.Live(), "three quarters allocated, and Null")
	assert.Len(t, h.Free(), 1000-751)
	assert.IsIncreasing(t, h.Free())
	for _, s := range h.Free() {
		assert.False(t, h.Allocated(s))
	}
	assert.NotEmpty(t, h.WeakRefs())
	assert.Equal(t, h.Slots(), h.Graph().Len())
	assert.PanicsWithValue(t, "heap: New: slots = 7 out of range [8, 67108864]", func() { heap.New(mark.Random, 7, 1) })
}

// TestMutateIsDeterministic: the same seed and steps give the same heaps, and
// a step changes the heap.
func TestMutateIsDeterministic(t *testing.T) {
	a, b := heap.New(mark.PowerLaw, 5000, 2), heap.New(mark.PowerLaw, 5000, 2)
	before := a.Clone()
	for range 3 {
		assert.Positive(t, a.Mutate())
		b.Mutate()
	}
	require.NoError(t, heap.Diff(a, b))
	assert.Error(t, heap.Diff(a, before), "three mutator steps changed nothing")

	// A clone mutates like the original; CopyFrom restores a snapshot.
	c := a.Clone()
	a.Mutate()
	c.Mutate()
	require.NoError(t, heap.Diff(a, c))
	c.CopyFrom(b)
	require.NoError(t, heap.Diff(c, b))
}

// TestDiffFindsFaults: Diff reports a live object freed, a dead object not
// freed and a wrong free list; an exact collection passes.
func TestDiffFindsFaults(t *testing.T) {
	h := heap.New(mark.Random, 3000, 5)
	h.Mutate()
	b := mark.NewBitmap(h.Slots())
	want := h.Clone()
	r := heap.Collect(want, b)
	require.Positive(t, r.Freed)
	require.Equal(t, r.Marked, want.Live())
	require.Len(t, want.Free(), r.Free)

	// A parallel-style sweep in two chunks, one ending in a partial word.
	got := h.Clone()
	mark.MarkSerial(got.Graph(), b)
	got.ProcessWeak(b)
	buf := make([]uint32, 64*got.Words())
	split := got.Words() / 2
	f1, d1 := got.SweepWords(b, 0, split, buf)
	f2, d2 := got.SweepWords(b, split, got.Words(), buf[64*split:])
	list := got.FreeList(f1 + f2)
	copy(list, buf[:f1])
	copy(list[f1:], buf[64*split:64*split+f2])
	assert.Equal(t, r.Freed, d1+d2)
	require.NoError(t, heap.Diff(got, want))

	live := want.Clone()
	// Free a live object: flip it in the heap under test via a sweep with
	// a bitmap that lacks it.
	var victim uint32
	for s := uint32(1); ; s++ {
		if live.Allocated(s) {
			victim = s
			break
		}
	}
	b2 := mark.NewBitmap(live.Slots())
	mark.MarkSerial(live.Graph(), b2)
	cut := mark.NewBitmap(live.Slots())
	for s := range uint32(live.Slots()) {
		if b2.Marked(s) && s != victim {
			cut.Mark(s)
		}
	}
	bad := live.Clone()
	n, _ := bad.SweepWords(cut, 0, bad.Words(), buf)
	copy(bad.FreeList(n), buf[:n])
	err := heap.Diff(bad, want)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "live object")
	assert.Contains(t, err.Error(), "free list")
	err = heap.Diff(want, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dead object")

	assert.Panics(t, func() { want.FreeList(want.Slots() + 1) })
}
