// Command perf is workgang's performance test: the Go counterpart of the
// perf test of HotSpot's WorkerThreads, plus the comparisons a Go user needs
// to decide whether, and from which grain size on, a workgang worker set pays
// off.
//
// Run it with
//
//	go run ./perf                  # everything, default sizes (within 30 s on an idle 2-CPU machine)
//	go run ./perf -quick           # everything, small sizes (a few seconds)
//	go run ./perf -long            # full sizes (kernel N up to 2000, all grains, 1000 pauses; minutes)
//	go run ./perf -scenario peers  # one section (a comma list selects several)
//	go run ./perf -scenario contended  # on a shared machine: busy processes, one CPU, a CPU quota (1-3 min)
//	go run ./perf -json out.json   # also write machine-readable results (schema in docs/perf.md)
//	go run ./perf -svg plots       # also write the plots as SVG files into plots/
//	go run ./perf -targets         # also check the project's performance goals
//	go run ./perf -h               # the flags
//
// The output starts with a header (CPU model, logical CPUs, GOMAXPROCS, Go
// version, OS and kernel, the measured cost of a clock read, and how soon an
// idle CPU runs a goroutine that a busy one readied): figures from
// two machines are comparable only when their headers are. Then come the
// selected sections, in this order. Every section names an implementation
// the same way: "workgang" (RunN of a plain task, every copy on a worker),
// "workgang+caller" (the task opted in with tasks.CallerRuns, so the caller
// runs copies too), "workgang ForRange", "1set:..." for workgang's modes on
// one long-lived set where the section also has fresh sets, and the peers
// "go+WaitGroup" (a go statement per copy and a sync.WaitGroup), "errgroup"
// (an errgroup.Group per run), "chanpool" (persistent goroutines fed by a
// channel), "serial" (the copies called one after another on the caller)
// and, in the empty-task sections, "pingpong", a bound rather than a peer:
// the cheapest hand-off two goroutines spinning on atomics can do.
//
//   - dispatch: workgang alone, as the original WorkerThreads test prints
//     it. At full (-max, default GOMAXPROCS), half (max/2) and min (1)
//     parallelism (each n measured once: on 2 CPUs half prints as "same n
//     as min"), each mode, -iters
//     iterations of -runs runs of an empty task, on a fresh set per
//     iteration and on one long-lived set created at -max that every level
//     and mode shares. Per iteration it prints the total and average time
//     of the runs and the slowest run; per setup the p50, p90 and p99 run
//     latencies, allocations per run, and how workers came to their copies.
//   - peers: the same runs, side by side in the same process, for workgang,
//     the peers, serial (the floor) and the ping-pong. Implementations are
//     interleaved per iteration so that machine noise hits them alike, and
//     every row is also printed as a ratio to workgang's two rows. It ends
//     with a sentence on the machine's state: whether hand-offs between
//     processors were fast or slow in this run.
//   - grain: phases doing W of real CPU work in total (W from 0.5 us to
//     1 ms), split across n copies, for n = 2 and n = max. Prints each
//     implementation's speedup over running the same copies serially on the
//     caller, and its break-even grain: the smallest W from which on it beats
//     serial, read from a monotone fit of its speedups so that one noisy
//     grain does not move it far.
//   - surplus: runs of fewer copies than a long-lived set has workers, both
//     modes, at ~5 and ~50 us per copy, against a set with exactly the
//     workers the run needs.
//   - pause: a scripted collector-like pause of 14 phases (n = 1 to -max,
//     0.5-100 us of work, caller-runs and plain mixed) on one long-lived set,
//     against serial and the peers running the same script: pause p50/p99
//     and the time of every phase.
//   - kernel: spectral-norm (40 phases per solve) for N = 32 to 512 (2000
//     with -long): serial, the peers, and workgang plain, caller-runs and
//     ForRange on one long-lived set; every result is checked against
//     serial's.
//   - mark: the stealing mark of examples/gc/mark against the static
//     partition and serial, on random, power-law and list graphs.
//   - gc: pauses of the examples/gc collector (p50/p99/max per collection)
//     for a small and a large heap, workgang against the same phases on the
//     peers, and serial.
//   - openmp: workgang construct for construct against GCC's libgomp and
//     LLVM's libomp, EPCC-style (package perf/openmp): the overhead of
//     PARALLEL, PARALLEL FOR, FOR inside a region, BARRIER, REDUCTION and six
//     loop schedules, and a grain sweep, the C side built at run time with
//     gcc/clang -fopenmp and run in processes of its own; without a
//     compiler it says how to get one and measures workgang alone. Its
//     mixed-process mode runs workgang's constructs in batches between
//     go+WaitGroup and errgroup fork-joins, against the same batches alone.
//   - contended (only with -scenario contended; Linux): speedups over serial
//     where the program does not own the machine. Each condition runs in a
//     process of its own (the binary starts itself again with a hidden
//     argument) holding one long-lived set: idle, one CPU-burning process
//     beside it, GOMAXPROCS of them, confined to one CPU with GOMAXPROCS 2,
//     and in a cgroup with a CPU quota below GOMAXPROCS (skipped, with the
//     reason, where no such cgroup can be made). Serial, go+WaitGroup,
//     errgroup and workgang's ForRange, RunContext, RunN of a plain task and
//     RunTeam take turns in 3 x -iters rounds at about 20 us, 200 us and
//     2 ms of slice work per call; then a verdict per loaded condition. The
//     burners are always stopped, also on an interrupt.
//   - targets (only with -targets or -scenario targets): the project's goals
//     for its own performance, each a ratio of two figures of this run with
//     the reason the goal exists, and PASS, MISS or N/A; every target is
//     counted. It needs the sections it checks and selects them.
//
// Every section with a comparison ends with verdict lines: what it
// compared, which did better and by how much; every ratio column says
// whether lower or higher is better; a speedup above what the machine's
// CPUs allow is marked as a measurement error. When other programs used a
// quarter of the CPUs or more during a section, its verdict is withheld
// with that figure.
//
// -svg DIR draws the grain sweep, the pause's phases, the kernel, the mark,
// the gc and the openmp results with gonum.org/v1/plot, each under a caption
// with the machine, Go version, date and command; every figure is also in
// the text output.
//
// Timing. The total and average of a batch of runs come from two clock reads
// around the whole batch, so they carry no clock overhead. Per-run latencies
// (p50, p90, p99, max) are measured in a second pass with one clock read per
// run, so each includes the cost of one time.Now (printed in the header; about
// 60 ns on a cloud VM). Ratios use medians over iterations of the batch
// averages. Allocations are counted with runtime.ReadMemStats around the
// batch pass and reported per run; the integer value is what testing.B's
// allocs/op would show.
//
// The packages, from the bottom up: internal/work (the calibrated CPU
// work), internal/runners (workgang's sets, the peers, serial, the
// ping-pong), internal/measure (timing runs, percentiles), internal/verdict
// and internal/plotkit (what every verdict and plot shares),
// internal/harness (flags, header, the run loop, verdicts, targets, JSON),
// the sections (internal/forkjoin, internal/workloads, internal/contended,
// and openmp), and internal/plots. Adding a section takes one entry in the
// sections table in sections.go (a harness.Section): a name, a title, the
// sections it needs, a function that measures with package measure and the
// runners of package runners, prints to the harness's writer and returns a
// JSON-encodable result, and, if it has them, its verdict, its targets and
// its plot.
//
// The fork-join scenarios exist as testing.B benchmarks too
// (internal/forkjoin/bench_test.go):
//
//	go test -run '^$' -bench . -count 10 ./perf/internal/forkjoin | tee new.txt
//	benchstat old.txt new.txt
package main

import (
	"io"
	"os"

	"github.com/workgang/workgang/perf/internal/contended"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// command is the perf command: the sections, and every workgang set pinned
// or not as -pin says.
var command = harness.Command{Sections: sections, Prepare: func(c harness.Config) { runners.Pin(c.Pin) }}

// main runs the perf test with the command line's flags.
func main() {
	if code, ok := contended.Role(os.Args[1:]); ok {
		os.Exit(code) // a child process of the contended section
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the perf command with args and returns its exit code (see
// harness.Command.Run).
func run(args []string, stdout, stderr io.Writer) int {
	return command.Run(args, stdout, stderr)
}
