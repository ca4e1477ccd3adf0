// Command pow is the proof-of-work example: a SHA-256 search for a nonce
// with Difficulty leading zero bits (package examples/pow/pow), split into
// copies over disjoint nonce ranges, the first finder stopping the rest. It
// times the serial search and the split ones (go + sync.WaitGroup and
// errgroup per call, RunContext and a caller-runs RunN on a workgang set),
// the first call on a fresh set against later calls, with and without the
// set's workers created beforehand, and the one-hash search's latency tail
// with what the slow calls saw (GC, a worker wake-up, OS preemption). Every
// nonce found is checked.
//
// Usage:
//
//	go run ./examples/pow [-difficulty 10] [-copies 0] [-calls 2000] [-first 30] [-gap 2ms] [-onehash 20000] [-trace file]
//
// -copies 0 means GOMAXPROCS. -trace writes a runtime/trace of the one-hash
// RunContext calls (go tool trace file). Measured figures are in
// docs/perf.md; the perf test's pow section runs the same measurement (go
// run ./perf -scenario pow).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/trace"
	"time"

	"github.com/workgang/workgang/examples/internal/cli"
	"github.com/workgang/workgang/examples/pow/bench"
	"github.com/workgang/workgang/examples/pow/pow"
	"github.com/workgang/workgang/tasks"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	opts  bench.Options
	trace string
}

// run runs the example and returns the exit code: 0 (also for -h), 2 for bad
// flags, 1 if a search failed its check.
func run(args []string, stdout, stderr io.Writer) int {
	var cfg config
	return cli.Run("pow", args, stderr, func(fs *flag.FlagSet) func() error {
		return defineFlags(fs, &cfg)
	}, func() error { return measure(cfg, stdout) })
}

// measure runs the measurements cfg asks for and prints them.
func measure(cfg config, stdout io.Writer) error {
	o := cfg.opts
	fmt.Fprintf(stdout, "pow: difficulty %d, %d copies, GOMAXPROCS %d; %d later calls, %d first calls after %v idle each; every nonce checked\n",
		o.Difficulty, o.Copies, runtime.GOMAXPROCS(0), o.Calls, o.FirstCalls, o.Gap)
	rows, err := bench.Measure(o)
	if err != nil {
		return err
	}
	bench.PrintRows(stdout, rows)
	nc, ncs := bench.NewCost(o.Copies, 50)
	fmt.Fprintf(stdout, "workers.New+Close: %.1f us; with SetActiveWorkers(%d): %.1f us\n", us(nc), o.Copies, us(ncs))
	if o.OneHash == 0 {
		return nil
	}
	if cfg.trace != "" {
		f, err := os.Create(cfg.trace)
		if err != nil {
			return fmt.Errorf("pow: %w", err)
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return fmt.Errorf("pow: %w", err)
		}
		defer trace.Stop()
	}
	fmt.Fprintf(stdout, "\none-hash search (difficulty 0), %d calls each on a warm set:\n", o.OneHash)
	tails, err := bench.OneHash(o.Copies, o.OneHash)
	if err != nil {
		return err
	}
	bench.PrintTails(stdout, tails)
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// defineFlags defines the command's flags on fs, writing into c, and returns
// the check of their values (run after parsing).
func defineFlags(fs *flag.FlagSet, c *config) (check func() error) {
	o := &c.opts
	fs.IntVar(&o.Difficulty, "difficulty", 10, "leading zero bits of the timed searches")
	fs.IntVar(&o.Copies, "copies", 0, "copies of the split searches and workers per set (0: GOMAXPROCS)")
	fs.IntVar(&o.Calls, "calls", 2000, "later calls per solver")
	fs.IntVar(&o.FirstCalls, "first", 30, "first calls per solver, each on a fresh set")
	fs.DurationVar(&o.Gap, "gap", 2*time.Millisecond, "idle time before each first call")
	fs.IntVar(&o.OneHash, "onehash", 20000, "calls of the one-hash search per solver (0: skip)")
	fs.Uint64Var(&o.Seed, "seed", 1, "puzzle seed")
	fs.StringVar(&c.trace, "trace", "", "write a runtime/trace of the one-hash calls to this `file`")
	return func() error {
		if o.Copies == 0 {
			o.Copies = runtime.GOMAXPROCS(0)
		}
		switch {
		case o.Difficulty < 0 || o.Difficulty > pow.MaxDifficulty:
			return fmt.Errorf("pow: -difficulty %d out of range [0, %d]", o.Difficulty, pow.MaxDifficulty)
		case o.Copies < 1 || o.Copies > tasks.MaxCopies:
			return fmt.Errorf("pow: -copies %d out of range [0, %d]", o.Copies, tasks.MaxCopies)
		case o.Calls < 1 || o.FirstCalls < 1 || o.OneHash < 0 || o.Gap < 0:
			return fmt.Errorf("pow: -calls %d, -first %d: want at least 1; -onehash %d, -gap %v: want at least 0", o.Calls, o.FirstCalls, o.OneHash, o.Gap)
		}
		return nil
	}
}
