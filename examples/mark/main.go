// Command mark runs the parallel-marking worked example: it builds synthetic
// object graphs, marks them serially (the reference), with an errgroup static
// partition of the roots, and with workgang's stealing marker, checks that
// the three marked the same objects, and prints median times and speedups.
//
// Usage:
//
//	go run ./examples/mark [-objects 4000000] [-shape all] [-workers 0] [-runs 5] [-seed 1] [-v]
//
// -shape is random, powerlaw, lists, or all; -workers 0 means every CPU (up
// to the default policy's maximum). -v adds the per-worker phase lines of the
// last stealing mark of each shape.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/workgang/workgang/perf/mark"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mark:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("mark", flag.ContinueOnError)
	objects := fs.Int("objects", mark.DefaultObjects, "objects per graph (1 to 4 million is the intended range)")
	shape := fs.String("shape", "all", "graph shape: random, powerlaw, lists, or all")
	nworkers := fs.Int("workers", 0, "parallelism of the parallel marks; 0 means all CPUs")
	runs := fs.Int("runs", mark.DefaultRuns, "timed marks of each kind per shape (medians are reported)")
	seed := fs.Uint64("seed", 1, "graph seed")
	verbose := fs.Bool("v", false, "print the phase log lines of the last stealing mark per shape")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := mark.Config{Objects: *objects, Workers: *nworkers, Runs: *runs, Seed: *seed, Verbose: *verbose}
	if *shape != "all" {
		for _, name := range strings.Split(*shape, ",") {
			s, err := mark.ParseShape(name)
			if err != nil {
				return err
			}
			cfg.Shapes = append(cfg.Shapes, s)
		}
	}
	cfg.Progress = func(note string) { fmt.Fprintf(os.Stderr, "\r\033[K%s", note) }
	_, err := mark.Section(os.Stdout, cfg)
	fmt.Fprint(os.Stderr, "\r\033[K")
	return err
}
