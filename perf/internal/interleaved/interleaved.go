// Package interleaved is the perf section that measures workgang the way
// users run it: in a process where other libraries' fork-joins run too.
// The project's own benchmarks time b.N runs back to back on one set; a
// user's program runs a batch of workgang runs, then something else forks
// and joins on goroutines, pools and channels, then workgang again, and
// every switch leaves workgang's workers parked, its caches cold and the
// scheduler's queues holding other goroutines.
//
// The section keeps ONE long-lived workgang set (full parallelism, every
// worker started before timing) and the peers, each set up once:
// go+WaitGroup and errgroup (package runners'), a sourcegraph/conc
// WaitGroup, an ants pool and a hand-written channel pool. Each operation
// (empty runs at n = 1 and n = full in both modes, the grain sweep W = 1 to
// 20 us per copy at n = full in both modes, and the pause script) is timed
// by two drivers over the same op value:
//
//   - alone: workgang's batches of the op back to back, nothing in
//     between, as `go test -bench` times b.N runs;
//   - interleaved: rounds of a ~20 ms batch of workgang runs followed by a
//     batch of the same op on every peer (and serial, the baseline of the
//     grain and pause ops), in an order rotating per round.
//
// Each figure is the median over batches of the batch's average run, with
// its [min-max]. Per op the section prints both of workgang's figures,
// marks the worse (the one docs report), says when the two ranges do not
// overlap, and divides the worse by the best peer's and go+WaitGroup's
// interleaved medians. bench_test.go has the same ops as plain testing.B
// benchmarks (`go test -bench . ./perf/internal/interleaved`).
package interleaved

import "github.com/workgang/workgang/perf/internal/harness"

// Section is the interleaved section.
var Section = harness.Section{
	Name:    "interleaved",
	Title:   "interleaved: workgang alone (back to back, as go test -bench) and between other libraries' fork-joins in one process",
	Run:     runSection,
	Verdict: sectionVerdict,
}

// runSection measures every op with both drivers on implementations
// started once, stops them (every goroutine they started has exited when it
// returns) and prints the tables.
func runSection(h *harness.Harness) (any, error) {
	size := h.Cfg.Max
	res := &Result{Size: size, NSPerUnit: h.UnitNS(), sizes: sizesFor(h.Cfg)}
	for _, im := range impls {
		res.Impls = append(res.Impls, im.name)
	}
	ops := buildOps(size, res.NSPerUnit)
	printIntro(h.Out, res)
	st := startAll(size)
	defer st.stop() // on a panic; a second stop does nothing
	warmUp(ops, st, res.WarmNS, h.Status)
	for _, o := range ops {
		res.Ops = append(res.Ops, measureOp(o, st, res.sizes, h.Status))
	}
	if err := st.stop(); err != nil {
		return nil, err
	}
	h.ClearStatus()
	printResult(h.Out, res)
	return res, nil
}
