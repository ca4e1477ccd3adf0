package forkjoin

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/work"
)

// The benchmarks run the perf sections' scenarios under testing.B, so that
// benchstat can compare commits:
//
//	go test -run '^$' -bench . -count 10 ./perf/internal/forkjoin > new.txt
//	benchstat old.txt new.txt
//
// Names carry the level and n, e.g. BenchmarkRun/full/n=2/workers.

// benchRun measures run of a runner that start returns, after a warm-up.
func benchRun(b *testing.B, start func() runners.Runner) {
	r := start()
	defer r.Close()
	for range measure.WarmRuns {
		r.Run()
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Run()
	}
}

// BenchmarkRun is the dispatch and peers sections: one run of an empty task
// at full, half and min parallelism, for workgang's modes and every peer.
func BenchmarkRun(b *testing.B) {
	size := runtime.GOMAXPROCS(0)
	for _, lv := range levels(size) {
		for _, im := range runners.Impls {
			b.Run(fmt.Sprintf("%s/n=%d/%s", lv.Label, lv.N, im.Name), func(b *testing.B) {
				benchRun(b, func() runners.Runner { return im.Start(size, lv.N, runners.Empty) })
			})
		}
	}
}

// benchGrains are the grains the grain benchmark uses: around the break-even
// grains and one where every implementation wins.
var benchGrains = []float64{1000, 3000, 10000, 100000}

// benchUnit caches the calibrated cost of a unit of work across benchmarks.
var benchUnit = sync.OnceValue(work.Calibrate)

// BenchmarkGrain is the grain section at n=2: a phase of W of CPU work split
// across 2 copies; direct is the serial baseline.
func BenchmarkGrain(b *testing.B) {
	const n = 2
	size := max(n, runtime.GOMAXPROCS(0))
	for _, w := range benchGrains {
		for _, im := range runners.Impls {
			b.Run(fmt.Sprintf("n=%d/W=%s/%s", n, measure.FmtNS(w), im.Name), func(b *testing.B) {
				gw := work.NewGrain(n, w, benchUnit())
				benchRun(b, func() runners.Runner { return im.Start(size, n, gw.Work) })
			})
		}
	}
}

// BenchmarkKernel is the kernel section: one spectral-norm solve (40
// phases) per op at N = 64 and 256, every implementation, the workgang
// modes sharing one long-lived set.
func BenchmarkKernel(b *testing.B) {
	ls := runners.NewLongSet(runtime.GOMAXPROCS(0))
	defer ls.Close()
	for _, n := range []int{64, 256} {
		for _, im := range kernelImpls {
			b.Run(fmt.Sprintf("N=%d/%s", n, im.name), func(b *testing.B) {
				s := newSpectral(n)
				par, stop := im.par(ls, s, min(ls.Size, n))
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
	ls := runners.NewLongSet(size)
	defer ls.Close()
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
