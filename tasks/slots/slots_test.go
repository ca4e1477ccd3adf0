package slots_test

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks/slots"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gap returns the bytes between the end of slot i's value and the start of
// slot i+1's.
func gap[T any](s *slots.Slots[T], i int) int {
	end := uintptr(unsafe.Pointer(s.At(i))) + unsafe.Sizeof(*s.At(i))
	return int(uintptr(unsafe.Pointer(s.At(i+1))) - end)
}

func checkGaps[T any](t *testing.T, name string) {
	s := slots.New[T](5)
	for i := range s.Len() - 1 {
		assert.GreaterOrEqual(t, gap(s, i), slots.Pad, "%s: between slots %d and %d", name, i, i+1)
	}
}

// Any two values are at least Pad bytes apart, whatever T's size.
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
	s := slots.New[int](3)
	assert.Equal(t, 3, s.Len())
	s.Set(0, 5)
	*s.At(1) += 7
	s.Set(2, -2)
	assert.Equal(t, []int{5, 7, -2}, []int{s.Get(0), s.Get(1), s.Get(2)})
	assert.Equal(t, 10, slots.Sum(s))
	assert.Equal(t, "[5 7 -2]", slots.Reduce(s, "[", func(acc string, v int) string {
		if acc != "[" {
			acc += " "
		}
		return acc + strconv.Itoa(v)
	})+"]")
	var ids []int
	for id, p := range s.All() {
		ids = append(ids, id)
		*p *= 2
		if id == 1 {
			break
		}
	}
	assert.Equal(t, []int{0, 1}, ids, "All stops when the loop breaks")
	assert.Equal(t, []int{10, 14, -2}, []int{s.Get(0), s.Get(1), s.Get(2)})
	s.Reset()
	assert.Zero(t, slots.Sum(s))

	var zero slots.Slots[float64]
	assert.Zero(t, zero.Len())
	assert.Zero(t, slots.Sum(&zero))
	assert.Equal(t, 0, slots.New[int](0).Len())
	assert.PanicsWithValue(t, "slots: New: negative length -1", func() { slots.New[int](-1) })
	assert.Panics(t, func() { s.At(3) })
}

// Workers writing their own slots concurrently: the race detector checks
// that the slots are distinct memory and that the join orders the writes
// before the reads.
func TestConcurrentWorkers(t *testing.T) {
	const workers, adds = 4, 10000
	s := slots.New[int64](workers)
	testutil.RunCopies(workers, func(w int) {
		p := s.At(w)
		for i := range adds {
			*p += int64(i)
		}
	})
	want := int64(workers * adds * (adds - 1) / 2)
	require.Equal(t, want, slots.Sum(s))
}
