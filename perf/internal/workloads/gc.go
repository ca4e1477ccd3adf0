package workloads

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	gccol "github.com/workgang/workgang/examples/gc/collector"
	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/workers"
)

// gc section sizes: a small heap, whose phases take microseconds (there the
// cost of starting a phase decides), and a large one, whose phases take
// milliseconds (there the mark's parallel speed decides). The default sizes
// keep the mark and gc sections together within a third of the default run's
// budget (defaultRunSeconds; measured times in docs/perf.md); -quick runs
// fewer cycles, the harness's own tests (runs below -quick's) a handful;
// -long makes the large heap one of longGCSlots (the size examples/gc runs
// by default) and runs more cycles of the small one.
const (
	smallGCSlots      = 1024
	largeGCSlots      = 128 << 10
	longGCSlots       = 1_000_000
	smallGCCycles     = 800
	largeGCCycles     = 48
	longGCSmallCycles = 10000
	longGCCycles      = 30
	quickGCDivisor    = 4 // -quick runs a quarter of the cycles
	tinyGCCycles      = 3
)

// GCResult is the gc section's result: one entry per heap.
type GCResult struct {
	Workers int      `json:"workers"`
	Heaps   []GCHeap `json:"heaps"`
}

// GCHeap is one heap's measurement.
type GCHeap struct {
	Name   string `json:"name"`
	Slots  int    `json:"slots"`
	Cycles int    `json:"cycles"`
	// LiveAvg is the average number of live objects after a collection.
	LiveAvg int     `json:"live_avg"`
	Rows    []GCRow `json:"rows"`
}

// GCRow is one implementation's pauses, in nanoseconds.
type GCRow struct {
	Impl  string  `json:"impl"`
	P50NS float64 `json:"p50_ns"`
	P99NS float64 `json:"p99_ns"`
	MaxNS float64 `json:"max_ns"`
	// VsSerial is the serial collector's p50 over this row's.
	VsSerial float64 `json:"vs_serial"`
}

// gcHeapSpec is one heap to measure.
type gcHeapSpec struct {
	name          string
	slots, cycles int
}

// gcHeaps sizes the section from the harness's configuration.
func gcHeaps(c harness.Config) []gcHeapSpec {
	small, large := gcHeapSpec{"small", smallGCSlots, smallGCCycles}, gcHeapSpec{"large", largeGCSlots, largeGCCycles}
	switch {
	case c.Tiny():
		small.cycles, large.cycles, large.slots = tinyGCCycles, tinyGCCycles, 16<<10
	case c.Quick:
		small.cycles, large.cycles = small.cycles/quickGCDivisor, large.cycles/quickGCDivisor
	case c.Long:
		small.cycles, large.cycles, large.slots = longGCSmallCycles, longGCCycles, longGCSlots
	}
	return []gcHeapSpec{small, large}
}

// gcImpl is one way to collect: a parallel collector on some runner, or the
// serial reference (c == nil).
type gcImpl struct {
	name string
	c    *gccol.Collector
}

// runGC times the examples/gc collector's pauses on a small and a large heap,
// for the collector on a workgang set, the same collector's phases on each
// peer (package runners), and the serial reference collector. Every cycle,
// the heap is mutated once and each implementation collects a copy of the
// same heap; each parallel result is checked against the serial one.
func runGC(h *harness.Harness) (any, error) {
	n := min(h.Cfg.Max, 64)
	set := workers.New("gc", n, runners.Options()...)
	defer set.Close()
	res := GCResult{Workers: n}
	fmt.Fprintf(h.Out, "pause per collection: p50, p99 and max over the cycles; %d workers; the peers run the same collector's phases\n", n)
	for _, spec := range gcHeaps(h.Cfg) {
		impls := []gcImpl{{runners.NameSerial, nil}, {runners.NameWorkgang, gccol.New(set)}}
		var stops []func()
		for _, p := range runners.Peers {
			run, stop := p.Start(n)
			impls = append(impls, gcImpl{p.Name, gccol.New(runners.FanOutRunner{Max: n, Run: run})})
			stops = append(stops, stop)
		}
		r, err := measureGC(h, spec, impls)
		for _, stop := range stops {
			stop()
		}
		if err != nil {
			return res, err
		}
		printGC(h.Out, r, n)
		res.Heaps = append(res.Heaps, r)
	}
	return res, nil
}

// measureGC runs spec.cycles cycles of every implementation on spec's heap.
func measureGC(h *harness.Harness, spec gcHeapSpec, impls []gcImpl) (GCHeap, error) {
	res := GCHeap{Name: spec.name, Slots: spec.slots, Cycles: spec.cycles}
	master := heap.New(mark.Random, spec.slots, 1)
	want, work := master.Clone(), master.Clone()
	b := mark.NewBitmap(spec.slots)
	pauses := make([][]time.Duration, len(impls))
	live := 0
	for cycle := range spec.cycles {
		if cycle%50 == 0 {
			h.Status("gc: %s heap, cycle %d of %d", spec.name, cycle+1, spec.cycles)
		}
		master.Mutate()
		// The serial collector first: its result is what the others must
		// produce. The parallel ones take turns at going first.
		want.CopyFrom(master)
		t0 := time.Now()
		r := heap.Collect(want, b)
		pauses[0] = append(pauses[0], time.Since(t0))
		live += r.Marked
		for k := range len(impls) - 1 {
			i := 1 + (cycle+k)%(len(impls)-1)
			work.CopyFrom(master)
			st := impls[i].c.Collect(work)
			pauses[i] = append(pauses[i], st.Pause)
			if err := heap.Diff(work, want); err != nil {
				return res, fmt.Errorf("%s heap, cycle %d, %s: %w", spec.name, cycle+1, impls[i].name, err)
			}
		}
		master.CopyFrom(want)
	}
	res.LiveAvg = live / spec.cycles
	for i, im := range impls {
		p := slices.Clone(pauses[i])
		slices.Sort(p)
		res.Rows = append(res.Rows, GCRow{
			Impl:  im.name,
			P50NS: float64(measure.Percentile(p, 50)),
			P99NS: float64(measure.Percentile(p, 99)),
			MaxNS: float64(p[len(p)-1]),
		})
	}
	for i := range res.Rows {
		res.Rows[i].VsSerial = measure.Ratio(res.Rows[0].P50NS, res.Rows[i].P50NS)
	}
	return res, nil
}

// row returns the named implementation's row, or nil.
func (r *GCHeap) row(name string) *GCRow {
	for i := range r.Rows {
		if r.Rows[i].Impl == name {
			return &r.Rows[i]
		}
	}
	return nil
}

// printGC prints one heap's table.
func printGC(w io.Writer, r GCHeap, workers int) {
	fmt.Fprintf(w, "\n%s heap: %d slots, %d live on average, %d cycles\n", r.Name, r.Slots, r.LiveAvg, r.Cycles)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	verdict.Heading(tw, true, verdict.Plain("impl"), verdict.Plain("p50"), verdict.Plain("p99"), verdict.Plain("max"), verdict.HigherCol("vs serial (p50)"))
	var mk verdict.Marker
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", x.Impl, usStr(x.P50NS), usStr(x.P99NS), usStr(x.MaxNS), mk.Speedup("%.2fx", x.VsSerial, workers))
	}
	tw.Flush()
	mk.Footnote(w)
}

// usStr formats nanoseconds as microseconds.
func usStr(ns float64) string { return fmt.Sprintf("%.1fus", ns/1e3) }
