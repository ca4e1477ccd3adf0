package harness

import (
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/perf/internal/work"
)

// competeUnits is the work a competing goroutine does between two checks of
// its stop flag: tens of microseconds at the per-unit cost the grain section
// calibrates (printed as "xorshift steps, N ns each"), so stopping is prompt.
const competeUnits = 10000

// competitors are goroutines that burn CPU while the sections run (-compete
// k): other work in the same process competing for the processors, as a
// runtime's or a server's own goroutines do while a parallel phase runs.
type competitors struct {
	stop atomic.Bool
	wg   sync.WaitGroup
	sink []work.PaddedWord // one result slot per goroutine, on its own line
}

// startCompetitors starts k goroutines of CPU work; stop ends them.
func startCompetitors(k int) *competitors {
	c := &competitors{sink: make([]work.PaddedWord, k)}
	c.wg.Add(k)
	for i := range k {
		go func() {
			defer c.wg.Done()
			// The Load that sees stopping set happens after the Store in
			// stop; the goroutine then exits and Done lets Wait return.
			for !c.stop.Load() {
				c.sink[i].V += work.Burn(competeUnits)
			}
		}()
	}
	return c
}

// stopAll stops the goroutines and waits until all have exited.
func (c *competitors) stopAll() {
	c.stop.Store(true)
	c.wg.Wait()
}
