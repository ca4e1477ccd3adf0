// Command mark runs the parallel-marking worked example (package
// examples/gc/mark): it builds synthetic object graphs, marks them serially
// (the reference), with an errgroup static partition of the roots, and with
// workgang's stealing marker, checks that the three marked the same objects,
// and prints median times and speedups.
//
// Usage:
//
//	go run ./examples/mark [-objects 2000000] [-shape all] [-workers 0] [-runs 3] [-seed 1] [-v]
//
// -shape is random, powerlaw, lists, or a comma list of them, or all;
// -workers 0 means every CPU (up to the default policy's maximum). -v adds the
// per-worker phase lines of the last stealing mark of each shape.
// -objects 4000000 is the size -long uses in the perf harness; docs/perf.md
// gives run times and figures, with the machine they were measured on. A progress
// line is shown only when stderr is a terminal.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/internal/term"
	"github.com/workgang/workgang/tasks/policy"
	"github.com/workgang/workgang/workers"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the command line.
type config struct {
	objects, workers, runs int
	shapes                 []mark.Shape
	seed                   uint64
	verbose                bool
}

// run runs the example and returns the exit code: 0 (also for -h), 2 for bad
// flags, 1 if a mark failed its check.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parse(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, err) // package errors carry their "mark: " prefix
		return 2
	}
	if err := compare(cfg, stdout, newProgress(stderr)); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("mark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.objects, "objects", 2_000_000, "objects per graph (up to 64Mi)")
	shape := fs.String("shape", "all", "graph shape: random, powerlaw, lists, a comma list of them, or all")
	fs.IntVar(&c.workers, "workers", 0, "parallelism of the parallel marks; 0 means all CPUs")
	fs.IntVar(&c.runs, "runs", 3, "timed marks of each kind per shape (medians are reported)")
	fs.Uint64Var(&c.seed, "seed", 1, "graph seed")
	fs.BoolVar(&c.verbose, "v", false, "print the phase log lines of the last stealing mark per shape")
	if err := fs.Parse(args); err != nil {
		return c, err // the flag package has printed the problem and the usage
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("mark: unexpected arguments %q", fs.Args())
	case c.objects < 2 || c.objects > mark.MaxObjects:
		return c, fmt.Errorf("mark: -objects %d out of range [2, %d]", c.objects, mark.MaxObjects)
	case c.workers < 0 || c.workers > workers.MaxLimit:
		return c, fmt.Errorf("mark: -workers %d out of range [0, %d]", c.workers, workers.MaxLimit)
	case c.runs < 1:
		return c, fmt.Errorf("mark: -runs %d, want >= 1", c.runs)
	}
	if c.workers == 0 {
		c.workers = policy.DefaultMaxWorkers()
	}
	c.shapes = mark.Shapes()
	if *shape != "all" {
		c.shapes = nil
		for _, name := range strings.Split(*shape, ",") {
			s, err := mark.ParseShape(strings.TrimSpace(name))
			if err != nil {
				return c, err
			}
			c.shapes = append(c.shapes, s)
		}
	}
	return c, nil
}

// compare times the three marks on each shape and prints the table.
func compare(cfg config, w io.Writer, progress func(string, ...any)) error {
	set := workers.New("mark", cfg.workers)
	defer set.Close()
	marker := mark.NewMarker(set)
	fmt.Fprintf(w, "mark: %d objects per graph, %d workers, median of %d runs, GOMAXPROCS %d\n",
		cfg.objects, cfg.workers, cfg.runs, runtime.GOMAXPROCS(0))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tmarked\tserial\tstatic\tstealing\tvs serial\tvs static\tsteals\t")
	var logs []string
	defer func() {
		tw.Flush()
		progress("")
		for _, l := range logs {
			fmt.Fprintln(w, l)
		}
	}()
	for _, shape := range cfg.shapes {
		progress("building %s graph", shape)
		g := mark.NewGraph(shape, cfg.objects, cfg.seed)
		ref, b := mark.NewBitmap(g.Len()), mark.NewBitmap(g.Len())
		want := mark.MarkSerial(g, ref)
		var serial, static, stealing, steals []time.Duration
		var last mark.Round
		for i := range cfg.runs {
			progress("%s graph, run %d of %d", shape, i+1, cfg.runs)
			r, err := mark.TimeRound(g, ref, b, want, marker, cfg.workers)
			if err != nil {
				return fmt.Errorf("%s graph: %w", shape, err)
			}
			serial, static, stealing = append(serial, r.Serial), append(static, r.Static), append(stealing, r.Stealing)
			steals = append(steals, time.Duration(r.Stats.Steals))
			last = r
		}
		se, st, sl := median(serial), median(static), median(stealing)
		fmt.Fprintf(tw, "%s\t%d\t%.1fms\t%.1fms\t%.1fms\t%.2fx\t%.2fx\t%d\t\n", shape, want,
			msec(se), msec(st), msec(sl), float64(se)/float64(sl), float64(st)/float64(sl), int64(median(steals)))
		if cfg.verbose {
			for _, l := range last.Stats.Log() {
				logs = append(logs, fmt.Sprintf("  %s: %s", shape, l))
			}
		}
	}
	return nil
}

func median(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func msec(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// newProgress returns a function that shows a progress line on w if w is a
// terminal (rewriting it in place), and does nothing otherwise, so that a
// redirected log gets no escape codes. An empty note clears the line.
func newProgress(w io.Writer) func(format string, args ...any) {
	f, ok := w.(*os.File)
	if !ok {
		return func(string, ...any) {}
	}
	if !term.IsTerminal(f) { // not a character-device test: /dev/null is one
		return func(string, ...any) {}
	}
	return func(format string, args ...any) {
		fmt.Fprintf(w, "\r\033[K"+format, args...)
	}
}
