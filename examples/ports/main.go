// Command ports is the library-port example: two image operations (a 3x3
// box blur, which needs a scratch row per goroutine, and a grayscale
// conversion, which needs none; package examples/ports/filter) that
// fork-join their rows through a library's own helper, in the two common
// helper styles (a channel of row indices drained by GOMAXPROCS goroutines;
// a range split into GOMAXPROCS parts, a goroutine each), and the same
// operations with the helpers ported onto one process-wide set
// (workers.Acquire): Do for the channel style, ForRange for the split
// style, and ForChunks for a blur that makes its scratch once per copy. It
// prints, per image size and number of goroutines calling at once, the
// time per call of each port over its original's (median of interleaved
// rounds, with the smallest and largest round's), the same for CPU time,
// and heap objects per call. Every output is checked against the serial
// operation's.
//
// Usage:
//
//	go run ./examples/ports [-sides 64,256,2048] [-callers 1,2] [-rounds 7] [-batch 30ms]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/workgang/workgang/examples/internal/cli"
	"github.com/workgang/workgang/examples/ports/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the example and returns the exit code: 0 (also for -h), 2 for
// bad flags, 1 if an output differed from the serial operation's.
func run(args []string, stdout, stderr io.Writer) int {
	o := bench.DefaultOptions()
	return cli.Run("ports", args, stderr, func(fs *flag.FlagSet) func() error {
		fs.Func("sides", "comma-separated sides of the square images (default 64,256,2048)", intList(&o.Sides))
		fs.Func("callers", "comma-separated numbers of goroutines calling at once (default 1,2)", intList(&o.Callers))
		fs.IntVar(&o.Rounds, "rounds", o.Rounds, "interleaved rounds (the figures are their medians)")
		fs.DurationVar(&o.Batch, "batch", o.Batch, "about how long each variant's calls take per round")
		return func() error {
			if o.Rounds < 1 || o.Batch <= 0 {
				return fmt.Errorf("ports: -rounds %d, -batch %v: want at least 1 and more than 0", o.Rounds, o.Batch)
			}
			return nil
		}
	}, func() error {
		fmt.Fprintf(stdout, "ports: time per call of each port over its original's, %d interleaved rounds; GOMAXPROCS %d, %s\n",
			o.Rounds, runtime.GOMAXPROCS(0), runtime.Version())
		rows, err := bench.Run(o)
		if err != nil {
			return err
		}
		bench.Print(stdout, rows)
		return nil
	})
}

// intList returns a flag.Func parser of a comma-separated list of positive
// integers into *dst.
func intList(dst *[]int) func(string) error {
	return func(s string) error {
		var v []int
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a positive integer", f)
			}
			v = append(v, n)
		}
		*dst = v
		return nil
	}
}
