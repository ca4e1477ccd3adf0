package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKernelAgreesWithSerial solves spectral-norm at N = 100 with every
// kernel implementation on one long-lived set and checks the benchmark's
// published answer (1.274219991) and that every result equals serial's
// exactly (each row is summed in the same order by every implementation).
func TestKernelAgreesWithSerial(t *testing.T) {
	ls := newLongSet(2)
	defer ls.close()
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

// TestKernelBlocks checks that the row blocks of c copies tile [0, n).
func TestKernelBlocks(t *testing.T) {
	for _, n := range []int{1, 7, 32, 100} {
		for c := 1; c <= min(n, 5); c++ {
			next := 0
			for i := range c {
				lo, hi := block(i, c, n)
				assert.Equal(t, next, lo, "n=%d c=%d copy %d", n, c, i)
				assert.GreaterOrEqual(t, hi-lo, n/c, "n=%d c=%d copy %d", n, c, i)
				next = hi
			}
			assert.Equal(t, n, next, "n=%d c=%d", n, c)
		}
	}
}
