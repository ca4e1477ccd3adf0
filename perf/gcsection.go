package main

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"

	gccol "github.com/workgang/workgang/examples/gc/collector"
	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/tasks"
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
	smallGCCycles     = 1000
	largeGCCycles     = 60
	longGCSmallCycles = 10000
	longGCCycles      = 30
	quickGCDivisor    = 4 // -quick runs a quarter of the cycles
	tinyGCCycles      = 3
)

// The gc section's targets: on the large heap, workgang's pause p50 at least
// gcLargeVsSerial times faster than the serial collector's and at most
// gcLargeVsPeers times either peer's; on the small heap, at most
// gcSmallVsPeers times the best peer's.
const (
	gcLargeVsSerial = 1.6
	gcLargeVsPeers  = 1.02
	gcSmallVsPeers  = 0.7
)

// Implementation names of the gc section.
const (
	gcWorkgang  = "workgang"
	gcWaitGroup = "go+WaitGroup"
	gcErrgroup  = "errgroup"
	gcSerial    = "serial"
)

// gcResult is the gc section's result: one entry per heap.
type gcResult struct {
	Workers int         `json:"workers"`
	Heaps   []gcHeapRes `json:"heaps"`
}

// gcHeapRes is one heap's measurement.
type gcHeapRes struct {
	Name   string `json:"name"`
	Slots  int    `json:"slots"`
	Cycles int    `json:"cycles"`
	// LiveAvg is the average number of live objects after a collection.
	LiveAvg int     `json:"live_avg"`
	Rows    []gcRow `json:"rows"`
	// Targets are the gc section's targets for this heap.
	Targets []target `json:"targets"`
}

// gcRow is one implementation's pauses, in nanoseconds.
type gcRow struct {
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
func gcHeaps(c config) []gcHeapSpec {
	small, large := gcHeapSpec{"small", smallGCSlots, smallGCCycles}, gcHeapSpec{"large", largeGCSlots, largeGCCycles}
	switch {
	case c.tiny():
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
// for the collector on a workgang set, the same collector's phases on go
// statements and on errgroup (a fresh goroutine per copy, as such code
// does), and the serial reference collector. Every cycle, the heap is mutated
// once and each implementation collects a copy of the same heap; each parallel
// result is checked against the serial one.
func runGC(h *harness) (any, error) {
	n := min(h.cfg.Max, 64)
	set := workers.New("gc", n, setOptions...)
	defer set.Close()
	res := gcResult{Workers: n}
	fmt.Fprintf(h.out, "pause per collection: p50, p99 and max over the cycles; %d workers; peers start a goroutine per copy\n", n)
	for _, spec := range gcHeaps(h.cfg) {
		impls := []gcImpl{
			{gcSerial, nil},
			{gcWorkgang, gccol.New(set)},
			{gcWaitGroup, gccol.New(waitGroupRunner(n))},
			{gcErrgroup, gccol.New(errgroupRunner(n))},
		}
		r, err := measureGC(h, spec, impls)
		if err != nil {
			return res, err
		}
		printGC(h.out, r)
		res.Heaps = append(res.Heaps, r)
	}
	return res, nil
}

// measureGC runs spec.cycles cycles of every implementation on spec's heap.
func measureGC(h *harness, spec gcHeapSpec, impls []gcImpl) (gcHeapRes, error) {
	res := gcHeapRes{Name: spec.name, Slots: spec.slots, Cycles: spec.cycles}
	master := heap.New(mark.Random, spec.slots, 1)
	want, work := master.Clone(), master.Clone()
	b := mark.NewBitmap(spec.slots)
	pauses := make([][]time.Duration, len(impls))
	live := 0
	for cycle := range spec.cycles {
		if cycle%50 == 0 {
			h.status("gc: %s heap, cycle %d of %d", spec.name, cycle+1, spec.cycles)
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
		res.Rows = append(res.Rows, gcRow{
			Impl:  im.name,
			P50NS: float64(percentile(p, 50)),
			P99NS: float64(percentile(p, 99)),
			MaxNS: float64(p[len(p)-1]),
		})
	}
	for i := range res.Rows {
		res.Rows[i].VsSerial = ratio(res.Rows[0].P50NS, res.Rows[i].P50NS)
	}
	res.Targets = gcTargets(res)
	return res, nil
}

// gcTargets evaluates the gc section's targets on one heap's rows.
func gcTargets(r gcHeapRes) []target {
	row := func(name string) gcRow {
		for _, x := range r.Rows {
			if x.Impl == name {
				return x
			}
		}
		return gcRow{}
	}
	wg, sv := row(gcWorkgang), row(gcSerial)
	peers := []gcRow{row(gcWaitGroup), row(gcErrgroup)}
	mk := func(name, goal string, limit, ratio float64, pass bool, detail string) target {
		st := statusMiss
		if pass {
			st = statusPass
		}
		return target{Name: name, Goal: goal, Limit: limit, Ratio: ratio, Status: st, Detail: detail}
	}
	var ts []target
	switch r.Name {
	case "large":
		sp := ratio(sv.P50NS, wg.P50NS)
		ts = append(ts, mk("gc large: serial / workgang pause p50", fmt.Sprintf(">= %.2f", gcLargeVsSerial), gcLargeVsSerial, sp,
			sp >= gcLargeVsSerial, fmt.Sprintf("%.0f us / %.0f us", sv.P50NS/1e3, wg.P50NS/1e3)))
		for _, p := range peers {
			x := ratio(wg.P50NS, p.P50NS)
			ts = append(ts, mk("gc large: workgang / "+p.Impl+" pause p50", fmt.Sprintf("<= %.2f", gcLargeVsPeers), gcLargeVsPeers, x,
				x <= gcLargeVsPeers, fmt.Sprintf("%.0f us / %.0f us", wg.P50NS/1e3, p.P50NS/1e3)))
		}
	case "small":
		best := peers[0]
		if peers[1].P50NS < best.P50NS {
			best = peers[1]
		}
		x := ratio(wg.P50NS, best.P50NS)
		ts = append(ts, mk("gc small: workgang / best peer pause p50", fmt.Sprintf("<= %.2f", gcSmallVsPeers), gcSmallVsPeers, x,
			x <= gcSmallVsPeers, fmt.Sprintf("%.1f us / %.1f us (%s)", wg.P50NS/1e3, best.P50NS/1e3, best.Impl)))
	}
	return ts
}

// printGC prints one heap's table and targets.
func printGC(w io.Writer, r gcHeapRes) {
	fmt.Fprintf(w, "\n%s heap: %d slots, %d live on average, %d cycles\n", r.Name, r.Slots, r.LiveAvg, r.Cycles)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "impl\tp50\tp99\tmax\tvs serial (p50)\t")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fx\t\n", x.Impl, usStr(x.P50NS), usStr(x.P99NS), usStr(x.MaxNS), x.VsSerial)
	}
	tw.Flush()
	for _, t := range r.Targets {
		fmt.Fprintf(w, "  %-4s %s = %.2f (goal %s; %s)\n", t.Status, t.Name, t.Ratio, t.Goal, t.Detail)
	}
}

// usStr formats nanoseconds as microseconds.
func usStr(ns float64) string { return fmt.Sprintf("%.1fus", ns/1e3) }

// waitGroupRunner runs each copy on a new goroutine and waits with a
// sync.WaitGroup: the phases of the collector as go + WaitGroup code runs
// them.
type waitGroupRunner int

func (r waitGroupRunner) MaxWorkers() int { return int(r) }

func (r waitGroupRunner) RunN(t tasks.Task, n int) {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		go func() {
			t.Work(i)
			wg.Done()
		}()
	}
	wg.Wait()
}

// errgroupRunner runs each copy in a new errgroup.Group's goroutine.
type errgroupRunner int

func (r errgroupRunner) MaxWorkers() int { return int(r) }

func (r errgroupRunner) RunN(t tasks.Task, n int) {
	var g errgroup.Group
	for i := range n {
		g.Go(func() error { t.Work(i); return nil })
	}
	_ = g.Wait() // the copies return no error
}
