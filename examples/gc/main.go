// Command gc runs the examples/gc collector: a stop-the-world, parallel
// mark-sweep collector (package collector) for a simulated heap (package
// heap), on a workgang worker set. Each cycle, the mutator allocates, drops
// and rewires objects; then the heap is collected by the parallel collector
// and, on a copy, by the serial reference collector; the two results must be
// identical (no live object freed, every dead one freed), or the command fails.
//
// Usage:
//
//	go run ./examples/gc [-slots 1000000] [-shape random] [-cycles 20] [-workers 0] [-seed 1] [-q]
//
// Every cycle prints its pause and one line per phase (-q omits them), in the
// style of HotSpot's -Xlog:gc+phases:
//
//	GC(3) Pause <ms>: live <before> -> <after> of <slots> slots, freed <n>, weak refs cleared <n>, dropped <n>
//	GC(3)   Clear (ms): Min: <t>, Avg: <t>, Max: <t>, Diff: <t>, Sum: <t>, Workers: <n>
//	GC(3)   Roots (ms): ...
//
// At the end a table gives the pause percentiles of the parallel collector and
// of the serial reference. The gc section of docs/perf.md has the perf
// harness's figures for smaller heaps, with the machine they were measured on.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/examples/gc/collector"
	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/tasks/policy"
	"github.com/workgang/workgang/workers"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	slots, cycles, workers int
	shape                  mark.Shape
	seed                   uint64
	quiet                  bool
}

// run runs the example and returns the exit code: 0 (also for -h), 2 for bad
// flags, 1 if a cycle differs from the serial reference.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parse(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := simulate(cfg, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.slots, "slots", 1_000_000, "heap slots (objects the heap can hold)")
	shape := fs.String("shape", "random", "shape of the initial object graph: random, powerlaw or lists")
	fs.IntVar(&c.cycles, "cycles", 20, "collections (a mutator step before each)")
	fs.IntVar(&c.workers, "workers", 0, "worker set size; 0 means all CPUs (up to the default policy's maximum)")
	fs.Uint64Var(&c.seed, "seed", 1, "heap and mutator seed")
	fs.BoolVar(&c.quiet, "q", false, "omit the per-cycle log lines")
	if err := fs.Parse(args); err != nil {
		return c, err // the flag package has printed the problem and the usage
	}
	var err error
	if c.shape, err = mark.ParseShape(*shape); err != nil {
		return c, fmt.Errorf("gc: -shape: %w", err)
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("gc: unexpected arguments %q", fs.Args())
	case c.slots < 8 || c.slots > mark.MaxObjects:
		return c, fmt.Errorf("gc: -slots %d out of range [8, %d]", c.slots, mark.MaxObjects)
	case c.cycles < 1:
		return c, fmt.Errorf("gc: -cycles %d, want >= 1", c.cycles)
	case c.workers < 0 || c.workers > workers.MaxLimit:
		return c, fmt.Errorf("gc: -workers %d out of range [0, %d]", c.workers, workers.MaxLimit)
	}
	if c.workers == 0 {
		c.workers = policy.DefaultMaxWorkers()
	}
	return c, nil
}

// simulate runs the cycles, checking each, and prints the log and the table.
func simulate(cfg config, w io.Writer) error {
	set := workers.New("gc", cfg.workers)
	defer set.Close()
	c := collector.New(set)
	h := heap.New(cfg.shape, cfg.slots, cfg.seed)
	ref := h.Clone()
	b := mark.NewBitmap(h.Slots())
	fmt.Fprintf(w, "gc: %s heap of %d slots, %d cycles, %d workers, GOMAXPROCS %d\n",
		cfg.shape, cfg.slots, cfg.cycles, cfg.workers, runtime.GOMAXPROCS(0))
	var parallel, serial []time.Duration
	for range cfg.cycles {
		h.Mutate()
		ref.CopyFrom(h)
		t0 := time.Now()
		heap.Collect(ref, b)
		serial = append(serial, time.Since(t0))
		st := c.Collect(h)
		parallel = append(parallel, st.Pause)
		if !cfg.quiet {
			for _, l := range st.Log() {
				fmt.Fprintln(w, l)
			}
		}
		if err := heap.Diff(h, ref); err != nil {
			return fmt.Errorf("gc: GC(%d): %w", st.Cycle, err)
		}
	}
	fmt.Fprintf(w, "every cycle identical to the serial reference collector\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "collector\tpause p50\tp99\tmax\tp50 vs serial\t")
	p := percentiles(parallel)
	s := percentiles(serial)
	fmt.Fprintf(tw, "workgang (%d workers)\t%s\t%s\t%s\t%.2fx\t\n", cfg.workers, ms(p[0]), ms(p[1]), ms(p[2]), float64(s[0])/float64(p[0]))
	fmt.Fprintf(tw, "serial reference\t%s\t%s\t%s\t%.2fx\t\n", ms(s[0]), ms(s[1]), ms(s[2]), 1.0)
	return tw.Flush()
}

// percentiles returns the p50, p99 and maximum of xs (nearest rank).
func percentiles(xs []time.Duration) [3]time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, max(0, int(p*float64(len(s))+0.999999)-1))] }
	return [3]time.Duration{at(0.50), at(0.99), s[len(s)-1]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond)) }
