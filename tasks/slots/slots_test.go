package slots

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gap returns the bytes between the end of slot i's value and the start of
// slot i+1's.
func gap[T any](s *Slots[T], i int) int {
	end := uintptr(unsafe.Pointer(s.At(i))) + unsafe.Sizeof(*s.At(i))
	return int(uintptr(unsafe.Pointer(s.At(i+1))) - end)
}

func checkGaps[T any](t *testing.T, name string) {
	s := New[T](5)
	for i := range len(s.s) - 1 {
		assert.GreaterOrEqual(t, gap(s, i), pad.CacheLine, "%s: between slots %d and %d", name, i, i+1)
	}
}

// Any two values are at least pad.CacheLine bytes apart, whatever T's size.
func TestValuesArePadApart(t *testing.T) {
	checkGaps[int8](t, "int8")
	checkGaps[int64](t, "int64")
	checkGaps[[3]int64](t, "[3]int64")
	checkGaps[[300]byte](t, "[300]byte")
	checkGaps[struct {
		a int32
		b string
	}](t, "struct")
}

func TestAccessors(t *testing.T) {
	s := New[int](3)
	assert.Len(t, s.s, 3)
	*s.At(0) = 5
	*s.At(1) += 7
	*s.At(2) = -2
	assert.Equal(t, 10, Sum(s))
	assert.Equal(t, []int{5, 7, -2}, []int{*s.At(0), *s.At(1), *s.At(2)})
	s.Reset()
	assert.Zero(t, Sum(s))
	assert.Equal(t, []int{0, 0, 0}, []int{*s.At(0), *s.At(1), *s.At(2)})

	var zero Slots[float64]
	assert.Zero(t, Sum(&zero))
	assert.Empty(t, New[int](0).s)
	assert.PanicsWithValue(t, "slots: New: negative length -1", func() { New[int](-1) })
	assert.Panics(t, func() { s.At(3) })
}

// Workers writing their own slots concurrently: the race detector checks
// that the slots are distinct memory and that the join orders the writes
// before the reads.
func TestConcurrentWorkers(t *testing.T) {
	const workers, adds = 4, 10000
	s := New[int64](workers)
	testutil.RunCopies(workers, func(w int) {
		p := s.At(w)
		for i := range adds {
			*p += int64(i)
		}
	})
	want := int64(workers * adds * (adds - 1) / 2)
	require.Equal(t, want, Sum(s))
}
