package main

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// The benchmarks run the perf sections' scenarios under testing.B, so that
// benchstat can compare commits:
//
//	go test -run '^$' -bench . -count 10 ./perf > new.txt
//	benchstat old.txt new.txt
//
// Names carry the level and n, e.g. BenchmarkRun/full/n=2/workers.

// benchRun measures run of a runner that start returns, after a warm-up.
func benchRun(b *testing.B, start func() runner) {
	r := start()
	defer r.close()
	for range warmRuns {
		r.run()
	}
	b.ReportAllocs()
	for b.Loop() {
		r.run()
	}
}

// BenchmarkRun is the dispatch and peers sections: one run of an empty task
// at full, half and min parallelism, for workgang's modes and every peer.
func BenchmarkRun(b *testing.B) {
	size := runtime.GOMAXPROCS(0)
	for _, lv := range levels(size) {
		for _, im := range impls {
			b.Run(fmt.Sprintf("%s/n=%d/%s", lv.Label, lv.N, im.name), func(b *testing.B) {
				benchRun(b, func() runner { return im.start(size, lv.N, emptyWork) })
			})
		}
	}
}

// benchGrains are the grains the grain benchmark uses: around the break-even
// grains and one where every implementation wins.
var benchGrains = []float64{1000, 3000, 10000, 100000}

// benchUnit caches the calibrated cost of a unit of work across benchmarks.
var benchUnit = sync.OnceValue(calibrate)

// BenchmarkGrain is the grain section at n=2: a phase of W of CPU work split
// across 2 copies; direct is the serial baseline.
func BenchmarkGrain(b *testing.B) {
	const n = 2
	size := max(n, runtime.GOMAXPROCS(0))
	for _, w := range benchGrains {
		for _, im := range impls {
			b.Run(fmt.Sprintf("n=%d/W=%s/%s", n, fmtNS(w), im.name), func(b *testing.B) {
				gw := newGrainWork(n, w, benchUnit())
				benchRun(b, func() runner { return im.start(size, n, gw.work) })
			})
		}
	}
}

// BenchmarkKernel is the kernel section: one spectral-norm solve (40
// phases) per op at N = 64 and 256, every implementation, the workgang
// modes sharing one long-lived set.
func BenchmarkKernel(b *testing.B) {
	ls := newLongSet(runtime.GOMAXPROCS(0))
	defer ls.close()
	for _, n := range []int{64, 256} {
		for _, im := range kernelImpls {
			b.Run(fmt.Sprintf("N=%d/%s", n, im.name), func(b *testing.B) {
				s := newSpectral(n)
				par, stop := im.par(ls, s, min(ls.size, n))
				defer stop()
				s.solve(par)
				b.ReportAllocs()
				for b.Loop() {
					s.solve(par)
				}
			})
		}
	}
}

// BenchmarkPause is the pause section: one scripted pause per op (without
// the mutator gap), every implementation, workgang on one long-lived set.
func BenchmarkPause(b *testing.B) {
	size := runtime.GOMAXPROCS(0)
	ls := newLongSet(size)
	defer ls.close()
	ps := resolvePhases(size, benchUnit())
	for _, im := range pauseImpls {
		b.Run(im.name, func(b *testing.B) {
			phase, stop := im.start(ls, size)
			defer stop()
			b.ReportAllocs()
			for b.Loop() {
				for p := range ps {
					phase(&ps[p])
				}
			}
		})
	}
}
