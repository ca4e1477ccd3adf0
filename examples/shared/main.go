// Command shared is the shared-workers example: thousands of instances of
// a library (package examples/shared/fleet), created at once, each running
// short parallel jobs with a 1 ms wait before each, their parts run on a
// worker set per instance, on one process-wide Acquire'd set, through the
// user-level "shared set if free, else serial" rule, on goroutines per job
// (go + sync.WaitGroup), or serially. It checks that every variant computed
// the serial variant's checksums and prints wall time, user and sys CPU,
// context switches, peak goroutines and peak RSS per variant.
//
// Usage:
//
//	go run ./examples/shared [-instances 4096] [-jobs 10] [-work 4us,40us] [-parts 0] [-wait 1ms] [-variants all] [-runs 3]
//
// -work is the CPU time of one job done serially (calibrated at start);
// -parts 0 means GOMAXPROCS (the parts per job and the size of every set).
// Measured figures are in docs/perf.md; the perf test's shared section runs
// the same measurement (go run ./perf -scenario shared).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/workgang/workgang/examples/internal/cli"
	"github.com/workgang/workgang/examples/shared/fleet"
	"github.com/workgang/workgang/tasks"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	base     fleet.Config
	work     []time.Duration
	variants []fleet.Variant
	runs     int
}

// run runs the example and returns the exit code: 0 (also for -h), 2 for bad
// flags, 1 if a variant's checksums differ from serial's.
func run(args []string, stdout, stderr io.Writer) int {
	var cfg config
	return cli.Run("shared", args, stderr, func(fs *flag.FlagSet) func() error {
		return defineFlags(fs, &cfg)
	}, func() error { return compare(cfg, stdout) })
}

// compare runs every variant at every job size cfg asks for and prints the
// table.
func compare(cfg config, stdout io.Writer) error {
	b := cfg.base
	fmt.Fprintf(stdout, "shared: %d instances at once, %d jobs each, %d parts per job, %v wait before each, GOMAXPROCS %d, median wall of %d runs; checksums checked against serial\n",
		b.Instances, b.Jobs, b.Parts, b.Wait, runtime.GOMAXPROCS(0), cfg.runs)
	var rows []fleet.Result
	for _, w := range cfg.work {
		c := b
		c.Nominal = w
		c.Units = fleet.Calibrate(w)
		rs, err := fleet.Compare(c, cfg.variants, cfg.runs)
		if err != nil {
			return err
		}
		rows = append(rows, rs...)
	}
	fleet.PrintTable(stdout, rows)
	return nil
}

// defineFlags defines the command's flags on fs, writing into c, and returns
// the check of their values (run after parsing).
func defineFlags(fs *flag.FlagSet, c *config) (check func() error) {
	fs.IntVar(&c.base.Instances, "instances", 4096, "instances started at once")
	fs.IntVar(&c.base.Jobs, "jobs", 10, "jobs per instance")
	work := fs.String("work", "4us,40us", "comma list of CPU time per job (serial)")
	fs.IntVar(&c.base.Parts, "parts", 0, "parts per job and workers per set (0: GOMAXPROCS)")
	fs.DurationVar(&c.base.Wait, "wait", time.Millisecond, "sleep before each job")
	variants := fs.String("variants", "all", "comma list of variants ("+fmt.Sprint(fleet.Variants())+") or all; serial always runs")
	fs.IntVar(&c.runs, "runs", 3, "runs of every variant (interleaved); the median wall time's run is printed")
	return func() error {
		if c.base.Parts == 0 {
			c.base.Parts = runtime.GOMAXPROCS(0)
		}
		switch {
		case c.base.Instances < 1 || c.base.Jobs < 1 || c.runs < 1:
			return fmt.Errorf("shared: -instances %d, -jobs %d, -runs %d: each must be at least 1", c.base.Instances, c.base.Jobs, c.runs)
		case c.base.Parts < 1 || c.base.Parts > tasks.MaxCopies:
			return fmt.Errorf("shared: -parts %d out of range [0, %d]", c.base.Parts, tasks.MaxCopies)
		case c.base.Wait < 0:
			return fmt.Errorf("shared: -wait %v must not be negative", c.base.Wait)
		}
		for _, f := range strings.Split(*work, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil || d <= 0 {
				return fmt.Errorf("shared: -work %q: want a comma list of positive durations", *work)
			}
			c.work = append(c.work, d)
		}
		c.variants = fleet.Variants()
		if *variants != "all" {
			c.variants = nil
			for _, s := range strings.Split(*variants, ",") {
				v, err := fleet.ParseVariant(strings.TrimSpace(s))
				if err != nil {
					return err
				}
				c.variants = append(c.variants, v)
			}
		}
		return nil
	}
}
