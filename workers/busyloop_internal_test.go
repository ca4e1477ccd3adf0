package workers

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/gang"
	"github.com/workgang/workgang/internal/goid"
)

// hookedTask is a loop's task that calls before(c) as copy c starts: there
// the test stands in for other goroutines that take and leave the set
// between two copies of a busy loop on its caller.
type hookedTask struct {
	*rangeTask
	before func(c int)
}

func (h hookedTask) Work(c int) {
	h.before(c)
	h.rangeTask.Work(c)
}

// A busy Do whose last copy panics after the set freed under the copies
// before it reports the i that panicked, though the pass that then finishes
// the loop on the caller runs the copies' ids again (and panics too): that
// pass writes a copy of cur. Its count of panics includes that pass's.
func TestBusyDoPanicReportsI(t *testing.T) {
	w := New("busy-do-i", 2, WithConcurrentRuns())
	defer w.Close()
	w.ensureCreated("test", 1)
	const other = 1 << 40 // no goroutine's token: another goroutine's run
	require.True(t, w.mu.tryLock(other))
	me := goid.Get()
	var callerRan atomic.Bool
	task := &rangeTask{callerRuns: true}
	n := task.loop.reset(50, rangeConfig{copies: 2, chunk: 1, callerRuns: true})
	task.loop.cur = make([]int, n)
	task.each = func(i int) {
		switch {
		case i == 0:
			w.mu.unlock() // the set frees: copy 0 stops claiming
		case i == 1:
			w.mu.unlock()
			panic("i=1")
		case i == 7: // in the pass that finishes the loop on the caller
			panic("i=7")
		case goid.Get() == me:
			callerRan.Store(true)
		default: // a worker leaves the caller an i (a bounded wait)
			for deadline := time.Now().Add(5 * time.Second); !callerRan.Load() && time.Now().Before(deadline); {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	retaken := false
	hooked := hookedTask{task, func(c int) {
		if c == 1 && !retaken { // the set is taken again before copy 1
			retaken = true
			require.True(t, w.mu.tryLock(other))
		}
	}}
	plan, pe := gang.Prepare(hooked)
	require.Nil(t, pe)
	v := func() (v any) {
		defer func() { v = recover() }()
		defer renameCopy(task.loop.cur) // as Do does
		w.runBusy("Do", hooked, plan, n)
		return nil
	}()
	p, ok := v.(*PanicError)
	require.True(t, ok, "got %T %v; want *PanicError", v, v)
	assert.Equal(t, "i=1", p.Value)
	assert.Equal(t, 1, p.Worker, "the i that panicked first")
	assert.Equal(t, 2, p.Panics, "the panics of both passes")
}
