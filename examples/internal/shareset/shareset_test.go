package shareset

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTryRunExclusive(t *testing.T) {
	var tr TryRun
	var inside, most, onSet, serial atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				tr.Do(func() {
					n := inside.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					onSet.Add(1)
					inside.Add(-1)
				}, func() { serial.Add(1) })
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(1), most.Load(), "onSet never runs twice at once")
	assert.Equal(t, int64(8*500), onSet.Load()+serial.Load(), "every call ran one of the two")
}

func TestTryRunNested(t *testing.T) {
	var tr TryRun
	var got []string
	ran := tr.Do(func() {
		got = append(got, "outer")
		inner := tr.Do(func() { got = append(got, "inner on set") }, func() { got = append(got, "inner serial") })
		assert.False(t, inner)
	}, func() { got = append(got, "outer serial") })
	assert.True(t, ran)
	assert.Equal(t, []string{"outer", "inner serial"}, got)
}

func TestTryRunFreeAfterPanic(t *testing.T) {
	var tr TryRun
	assert.PanicsWithValue(t, "boom", func() { tr.Do(func() { panic("boom") }, func() {}) })
	assert.True(t, tr.Do(func() {}, func() {}), "free again")
}
