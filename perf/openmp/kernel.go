package openmp

import (
	"math"
	"runtime"
	"time"
)

// The Go side's delay and grain work: the xorshift chain of epcc.c's kernel,
// one dependent step after another. kernel is not inlined, so its count is
// never a constant the compiler could specialise on; the loop carries x from
// one iteration to the next, so it can be neither vectorized nor reordered;
// and work keeps the result alive, so nothing is dropped. Its cost per iteration is
// calibrated in this process, as epcc.c calibrates its own. gc, gcc and
// clang compile the loop body to the same nine instructions (three moves,
// three shifts, three xors) plus two or three for the loop (go
// build -gcflags=-S; objdump -d of the built epcc).

// kernelSeedMul spreads the count into the seed (the constant epcc.c uses).
const kernelSeedMul = 0x9E3779B97F4A7C15

// kernel runs n steps of xorshift from x.
//
//go:noinline
func kernel(x uint64, n int) uint64 {
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// work runs n iterations of the kernel. KeepAlive is a use of the result
// (and kernel is a call the compiler does not look into), so the work stays.
func work(n int) {
	runtime.KeepAlive(kernel(uint64(n)*kernelSeedMul|1, n))
}

// calibrateKernel returns the kernel's cost per iteration in ns: the best of
// a few timings of about half a millisecond each (the best is the least disturbed), as
// epcc.c's calibrate.
func calibrateKernel() float64 {
	const n = 1 << 18
	best := time.Duration(math.MaxInt64)
	for range 7 {
		start := time.Now()
		work(n)
		best = min(best, time.Since(start))
	}
	return float64(best) / n
}

// itersFor returns the kernel iterations that take about ns, at least 1.
func itersFor(ns, nsPerIter float64) int {
	return max(1, int(math.Round(ns/nsPerIter)))
}
