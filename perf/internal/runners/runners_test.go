package runners

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestImplsRunEveryCopy checks every implementation runs copies 0..n-1 once
// per run and stops its goroutines on close (goleak checks the latter).
func TestImplsRunEveryCopy(t *testing.T) {
	for _, im := range Impls {
		for _, n := range []int{1, 2, 3} {
			counts := make([]atomic.Int64, n)
			r := im.Start(2, n, func(i int) { counts[i].Add(1) })
			const runs = 50
			for range runs {
				r.Run()
			}
			r.Close()
			for i := range counts {
				assert.Equal(t, int64(runs), counts[i].Load(), "%s n=%d copy %d: got %d runs; want %d", im.Name, n, i, counts[i].Load(), runs)
			}
		}
	}
}

// TestPeersRunEveryCopy checks that each peer, started once for runs of up
// to 3 copies, runs copies 0..n-1 once per run for runs of every n up to 3,
// mixed on one started Peer as the pause section mixes them, and that stop
// ends its goroutines (goleak checks the latter).
func TestPeersRunEveryCopy(t *testing.T) {
	for _, p := range Peers {
		run, stop := p.Start(3)
		for round := range 20 {
			n := 1 + round%3
			counts := make([]atomic.Int64, n)
			run(n, func(i int) { counts[i].Add(1) })
			for i := range counts {
				assert.Equal(t, int64(1), counts[i].Load(), "%s n=%d copy %d: got %d calls; want 1", p.Name, n, i, counts[i].Load())
			}
		}
		stop()
	}
}
