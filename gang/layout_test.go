package gang

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/workgang/workgang/tasks"
)

// TestHotLineLayout checks the layout the Dispatcher's doc promises: the
// words a run writes fit in one 64-byte line at a 64-byte offset, and a
// Dispatcher allocated on its own starts 64-byte aligned, so that line is a
// real cache line.
func TestHotLineLayout(t *testing.T) {
	var d Dispatcher
	start := unsafe.Offsetof(d.start)
	end := unsafe.Offsetof(d.end) + unsafe.Sizeof(d.end)
	assert.Equal(t, uintptr(hotOffset), start)
	assert.Zero(t, start%lineSize, "hot block offset %d is not line-aligned", start)
	assert.LessOrEqual(t, end-start, uintptr(lineSize), "hot block spans %d bytes", end-start)
	for _, off := range []uintptr{unsafe.Offsetof(d.claimed), unsafe.Offsetof(d.notFinished)} {
		assert.True(t, off >= start && off < end, "counter at %d is outside the hot block [%d, %d)", off, start, end)
	}
	assert.GreaterOrEqual(t, unsafe.Offsetof(d.task), start+lineSize, "task shares the hot line")
	assert.Zero(t, unsafe.Sizeof(d)%lineSize, "size %d is not a multiple of the line", unsafe.Sizeof(d))
	for i := range heapDispatchers {
		p := new(Dispatcher)
		heapDispatchers[i] = p // escape to the heap, as in package workers
		if addr := uintptr(unsafe.Pointer(&p.start)); addr%lineSize != 0 {
			t.Fatalf("hot block of a new Dispatcher at %#x is not 64-byte aligned", addr)
		}
	}
}

var heapDispatchers [100]*Dispatcher

type sliceTask struct{ ids []int } // uncomparable: a == b would panic

func (sliceTask) Name() string { return "slice" }
func (sliceTask) Work(int)     {}

func TestSameTask(t *testing.T) {
	a := tasks.Func("a", func(int) {})
	b := tasks.Func("b", func(int) {})
	assert.True(t, sameTask(a, a))
	assert.False(t, sameTask(a, b))
	assert.False(t, sameTask(nil, a))
	assert.True(t, sameTask(nil, nil))
	var u tasks.Task = sliceTask{}
	assert.NotPanics(t, func() { sameTask(u, sliceTask{}) })
}
