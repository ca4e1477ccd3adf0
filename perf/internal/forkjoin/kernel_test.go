package forkjoin

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/workgang/workgang/perf/internal/runners"
)

// TestKernelAgreesWithSerial solves spectral-norm at N = 100 with every
// kernel implementation on one long-lived set and checks the benchmark's
// published answer (1.274219991) and that every result equals serial's
// exactly (each row is summed in the same order by every implementation).
func TestKernelAgreesWithSerial(t *testing.T) {
	ls := runners.NewLongSet(2)
	defer ls.Close()
	for _, c := range []int{1, 2} {
		var ref float64
		for i, im := range kernelImpls {
			s := newSpectral(100)
			par, stop := im.par(ls, s, c)
			got := s.solve(par)
			stop()
			assert.Equal(t, "1.274219991", fmt.Sprintf("%.9f", got), "%s copies=%d", im.name, c)
			if i == 0 {
				ref = got
			}
			assert.Equal(t, ref, got, "%s copies=%d: got %v; want serial's %v", im.name, c, got, ref)
		}
	}
}
