package interleaved

import (
	"runtime"
	"time"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
)

// Sizes of the two drivers.
const (
	minRounds  = 5  // rounds (and alone batches) at every size
	longRounds = 11 // with -long
)

// sizes are the rounds and batch lengths of one run of the section.
type sizes struct {
	Rounds int `json:"rounds"` // alone batches and interleaved rounds per op
	// WorkgangBatchNS is the length workgang's batches are sized to (alone
	// and interleaved), OtherBatchNS that of a peer's or serial's batch.
	WorkgangBatchNS float64 `json:"workgang_batch_ns"`
	OtherBatchNS    float64 `json:"other_batch_ns"`
	// WarmNS is the untimed warm-up of each implementation before the first
	// op (warmUp).
	WarmNS float64 `json:"warm_ns"`
}

// sizesFor returns the sizes of a run with configuration c: at least
// minRounds rounds (-iters if more); workgang's batches ~20 ms and the
// others' ~5 ms by default (so that the default run of every section stays
// within its stated time: about 7 s on 2 CPUs), every batch 20 ms and
// longRounds rounds with -long (about 30 s), 4 and 2 ms with -quick (about
// 2 s), and a fraction of a millisecond in the harness's own tests.
func sizesFor(c harness.Config) sizes {
	ms := float64(time.Millisecond)
	switch {
	case c.Long:
		return sizes{max(longRounds, c.Iters), 20 * ms, 20 * ms, 40 * ms}
	case c.Tiny():
		return sizes{minRounds, 0.4 * ms, 0.2 * ms, 1 * ms}
	case c.Quick:
		return sizes{max(minRounds, c.Iters), 4 * ms, 2 * ms, 30 * ms}
	}
	return sizes{max(minRounds, c.Iters), 20 * ms, 5 * ms, 40 * ms}
}

// maxBatchRuns bounds a batch whatever the calibration says.
const maxBatchRuns = 1 << 24

// calibrate finds how many runs of o on fj take about target: batches of
// 1, 2, 4, ... runs until one takes a quarter of it, then a batch of the
// runs that scales to and the scale again from it, repeated once more if
// that batch was off by more than 2x (a short probe that met a few slow
// runs, waking parked goroutines, undercounts). The probes warm fj up for
// o. It also returns the heap allocations per run of the last probe
// (runtime.ReadMemStats around each probe, as testing.B counts them; never
// around a timed batch).
func calibrate(o *op, fj forkJoin, target float64) (runs int, allocsPerRun float64) {
	var before, after runtime.MemStats
	probe := func(n int) float64 {
		runtime.ReadMemStats(&before)
		_, wall := o.batch(fj, n)
		runtime.ReadMemStats(&after)
		allocsPerRun = float64(after.Mallocs-before.Mallocs) / float64(n)
		return max(1, float64(wall))
	}
	scale := func(n int, wall float64) int { return int(min(max(1, float64(n)*target/wall), maxBatchRuns)) }
	n := 1
	wall := probe(n)
	for wall < target/4 && n < maxBatchRuns {
		n *= 2
		wall = probe(n)
	}
	for range 2 {
		n = scale(n, wall)
		wall = probe(n)
		if wall >= target/2 && wall <= 2*target {
			break
		}
	}
	return scale(n, wall), allocsPerRun
}

// warmUp runs every started implementation on every op, untimed, for about
// per in all each: a new set's first milliseconds of runs are several times
// slower than its later ones (threads created, caches and the workers'
// spinning settling), and no op should pay for being measured first.
func warmUp(ops []*op, st *started, per float64, say status) {
	for i, fj := range st.fj {
		if fj == nil {
			continue
		}
		say("interleaved: warming up %s", impls[i].name)
		for _, o := range ops {
			for start := time.Now(); float64(time.Since(start)) < per/float64(len(ops)); {
				o.batch(fj, 1)
			}
		}
	}
}

// batchAvg runs a batch and returns its average run in ns.
func batchAvg(o *op, fj forkJoin, runs int) float64 {
	timed, _ := o.batch(fj, runs)
	return float64(timed) / float64(runs)
}

// status reports progress between batches (harness.Harness.Status).
type status func(format string, args ...any)

// measureOp measures o with both drivers over the same op value and the
// same started implementations:
//
//   - alone: workgang's batches back to back after a garbage collection,
//     nothing else in between, as `go test -bench` runs b.N;
//   - interleaved: sz.Rounds rounds, each a batch of workgang followed by a
//     batch of the same op on every peer (and serial where the op has it as
//     its baseline), the others' order rotating by one per round.
//
// Every batch's runs are fixed before the first timed batch, by calibrate.
func measureOp(o *op, st *started, sz sizes, say status) OpResult {
	wg := st.fj[0] // impls[0] is workgang
	say("interleaved %s: calibrating %s", o.Name(), impls[0].name)
	wgRuns, wgAllocs := calibrate(o, wg, sz.WorkgangBatchNS)
	runtime.GC()
	alone := make([]float64, sz.Rounds)
	for r := range alone {
		say("interleaved %s: alone batch %d/%d", o.Name(), r+1, sz.Rounds)
		alone[r] = batchAvg(o, wg, wgRuns)
	}

	others := otherImpls(o, st)
	runs := make([]int, len(impls))
	allocs := make([]float64, len(impls))
	runs[0], allocs[0] = wgRuns, wgAllocs
	for _, i := range others {
		say("interleaved %s: calibrating %s", o.Name(), impls[i].name)
		runs[i], allocs[i] = calibrate(o, st.fj[i], sz.OtherBatchNS)
	}
	avgs := make([][]float64, len(impls))
	for r := range sz.Rounds {
		say("interleaved %s: round %d/%d", o.Name(), r+1, sz.Rounds)
		avgs[0] = append(avgs[0], batchAvg(o, wg, wgRuns))
		for k := range others {
			i := others[(k+r)%len(others)]
			avgs[i] = append(avgs[i], batchAvg(o, st.fj[i], runs[i]))
		}
	}

	res := OpResult{Op: o.Name(), Kind: o.Kind, N: o.N, WorkNS: o.WorkNS, Mode: o.Mode,
		Alone: ImplResult{Impl: impls[0].name, Figure: newFigure(alone, wgRuns), AllocsPerRun: wgAllocs}}
	for i, im := range impls {
		if avgs[i] != nil {
			res.Interleaved = append(res.Interleaved, ImplResult{Impl: im.name, Figure: newFigure(avgs[i], runs[i]), AllocsPerRun: allocs[i]})
		}
	}
	res.judge()
	return res
}

// otherImpls returns the indices in impls of the started peers, and of
// serial if o has it as its baseline.
func otherImpls(o *op, st *started) []int {
	var out []int
	for i, im := range impls {
		if st.fj[i] == nil || im.kind == kindWorkgang || im.kind == kindSerial && !o.serial {
			continue
		}
		out = append(out, i)
	}
	return out
}

// Figure is one implementation's time for one op under one driver: the
// median, min and max over its batches of the batch's average run.
type Figure struct {
	MedianNS float64   `json:"median_ns"`
	MinNS    float64   `json:"min_ns"`
	MaxNS    float64   `json:"max_ns"`
	BatchNS  []float64 `json:"batch_ns"` // every batch's average run, in the order measured
	Runs     int       `json:"runs"`     // runs per batch
}

// newFigure summarizes the batch averages avgs of batches of runs runs.
func newFigure(avgs []float64, runs int) Figure {
	f := Figure{MedianNS: measure.Median(avgs), BatchNS: avgs, Runs: runs}
	if len(avgs) > 0 {
		f.MinNS, f.MaxNS = avgs[0], avgs[0]
		for _, a := range avgs {
			f.MinNS, f.MaxNS = min(f.MinNS, a), max(f.MaxNS, a)
		}
	}
	return f
}

// overlaps reports whether the ranges [min, max] of f and g overlap.
func (f Figure) overlaps(g Figure) bool { return f.MinNS <= g.MaxNS && g.MinNS <= f.MaxNS }
