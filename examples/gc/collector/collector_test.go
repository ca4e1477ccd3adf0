package collector_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/examples/gc/collector"
	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/internal/race"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// goRunner runs every copy on a new goroutine: the go+WaitGroup peer.
type goRunner struct{ max int }

func (g goRunner) MaxWorkers() int { return g.max }

func (g goRunner) RunN(t tasks.Task, n int) {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			t.Work(i)
		}()
	}
	wg.Wait()
}

// small units: every phase of a heap of a few thousand slots gets several
// workers, so the parallel paths run.
var small = collector.Units{ClearWords: 4, MarkObjects: 256, SweepWords: 4, FreeSlots: 64}

// TestCollectMatchesReference is the central check: on every shape, heap
// size and runner, each of several cycles (a mutator step between them)
// leaves the heap exactly as the serial reference collector does.
func TestCollectMatchesReference(t *testing.T) {
	set := workers.New("gc-test", 3)
	defer set.Close()
	cycles := 12
	if race.Enabled {
		cycles = 5
	}
	runners := []struct {
		name string
		r    mark.Runner
	}{{"workers", set}, {"go", goRunner{3}}}
	for _, rn := range runners {
		for _, shape := range mark.Shapes() {
			for _, slots := range []int{8, 1000, 20000} {
				t.Run(fmt.Sprintf("%s/%s/slots=%d", rn.name, shape, slots), func(t *testing.T) {
					h := heap.New(shape, slots, 3)
					c := collector.New(rn.r)
					c.SetUnits(small)
					ref := mark.NewBitmap(slots)
					var frees []int
					for cycle := range cycles {
						want := h.Clone()
						wr := heap.Collect(want, ref)
						st := c.Collect(h)
						require.NoError(t, heap.Diff(h, want), "cycle %d", cycle)
						require.Equal(t, wr, st.Result, "cycle %d", cycle)
						assert.Equal(t, cycle+1, st.Cycle)
						assert.Positive(t, st.Pause)
						assert.Equal(t, st.Marked, h.Live())
						assert.Len(t, st.Log(), 10)
						frees = append(frees, st.Freed)
						h.Mutate()
					}
					if slots >= 1000 {
						// The mutator makes garbage: something is freed after
						// the first cycles, and not the same every time.
						assert.Positive(t, frees[len(frees)-1]+frees[len(frees)-2], "freed %v", frees)
					}
				})
			}
		}
	}
}

// TestCollectUsesSeveralWorkers: with small units a large enough heap gets
// more than one worker in every parallel phase, and the serial step one.
func TestCollectUsesSeveralWorkers(t *testing.T) {
	set := workers.New("gc-workers", 2)
	defer set.Close()
	c := collector.New(set)
	c.SetUnits(small)
	h := heap.New(mark.Random, 20000, 1)
	h.Mutate()
	st := c.Collect(h)
	assert.Equal(t, 2, st.ClearWorkers)
	assert.Equal(t, 2, st.MarkWorkers)
	assert.Equal(t, 2, st.SweepWorkers)
	assert.Equal(t, 2, st.FreeWorkers)
	assert.Equal(t, 1, st.Weak.Workers)
	assert.Equal(t, st.Freed, int(st.FreedPerWorker.Sum))

	// With the default units the same small heap runs every phase on one
	// copy: inline on the caller, no worker woken.
	d := collector.New(set)
	before := set.Stats()
	st = d.Collect(heap.New(mark.Random, 20000, 1))
	after := set.Stats()
	assert.Equal(t, 1, st.MarkWorkers)
	assert.Equal(t, after.Runs-before.Runs, after.InlineRuns-before.InlineRuns, "every run of a small heap inline")
}

func TestSetUnitsRejectsNegative(t *testing.T) {
	c := collector.New(goRunner{1})
	assert.PanicsWithValue(t, "collector: SetUnits({ClearWords:0 MarkObjects:-1 SweepWords:0 FreeSlots:0}): negative unit",
		func() { c.SetUnits(collector.Units{MarkObjects: -1}) })
}
