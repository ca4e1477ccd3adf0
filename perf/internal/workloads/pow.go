package workloads

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/examples/pow/bench"
	"github.com/workgang/workgang/perf/internal/harness"
)

// pow section sizes: searches of difficulty 10 (about 1000 hashes, on the
// order of 0.1 ms serially), first calls after an idle gap, and the
// one-hash search's tail; more calls under -long; the harness's own tests
// (tiny) run a few easy searches.
const (
	powDifficulty, powTinyDifficulty   = 10, 4
	powCalls, powQuickCalls            = 500, 200
	powLongCalls, powTinyCalls         = 5000, 20
	powFirst, powLongFirst, powTinyFst = 20, 100, 2
	powOneHash, powQuickOneHash        = 20000, 5000
	powLongOneHash, powTinyOneHash     = 200000, 200
	powGap                             = 2 * time.Millisecond
)

// powResult is what the pow section measured.
type powResult struct {
	Options  bench.Options    `json:"options"`
	Rows     []bench.Row      `json:"rows"`
	NewClose time.Duration    `json:"new_close_ns"`  // workers.New + Close
	NewAll   time.Duration    `json:"new_create_ns"` // New + SetActiveWorkers(copies) + Close
	Tails    []bench.Tail     `json:"one_hash"`
	Targets  []harness.Target `json:"targets"`
}

// runPow times the pow example's solvers and the one-hash tail.
func runPow(h *harness.Harness) (any, error) {
	o := bench.Options{Difficulty: powDifficulty, Copies: h.Cfg.Max, Calls: powCalls, FirstCalls: powFirst, Gap: powGap, OneHash: powOneHash, Seed: 1}
	switch c := h.Cfg; {
	case c.Tiny():
		o.Difficulty, o.Calls, o.FirstCalls, o.OneHash = powTinyDifficulty, powTinyCalls, powTinyFst, powTinyOneHash
	case c.Quick:
		o.Calls, o.OneHash = powQuickCalls, powQuickOneHash
	case c.Long:
		o.Calls, o.FirstCalls, o.OneHash = powLongCalls, powLongFirst, powLongOneHash
	}
	fmt.Fprintf(h.Out, "difficulty %d, %d copies; %d later calls, %d first calls after %v idle each; every nonce checked\n",
		o.Difficulty, o.Copies, o.Calls, o.FirstCalls, o.Gap)
	h.Status("pow: searches")
	rows, err := bench.Measure(o)
	if err != nil {
		return nil, err
	}
	res := powResult{Options: o, Rows: rows}
	h.ClearStatus()
	bench.PrintRows(h.Out, rows)
	res.NewClose, res.NewAll = bench.NewCost(o.Copies, 50)
	fmt.Fprintf(h.Out, "workers.New+Close: %.1f us; with SetActiveWorkers(%d): %.1f us\n",
		float64(res.NewClose)/1e3, o.Copies, float64(res.NewAll)/1e3)
	h.Status("pow: one-hash search")
	res.Tails, err = bench.OneHash(o.Copies, o.OneHash)
	if err != nil {
		return nil, err
	}
	h.ClearStatus()
	fmt.Fprintf(h.Out, "\none-hash search (difficulty 0), %d calls each on a warm set:\n", o.OneHash)
	bench.PrintTails(h.Out, res.Tails)
	fmt.Fprintln(h.Out)
	res.Targets = powTargets(&res)
	return &res, nil
}

// powTargets: the first call (fresh set, New included; and with the
// workers created beforehand) at most 2x go + WaitGroup's first call, for
// the timed search and for the one-hash search (the fixed cost of a first
// call), and the one-hash RunContext p99 at most 5 us.
func powTargets(r *powResult) []harness.Target {
	row := map[string]bench.Row{}
	for _, x := range r.Rows {
		row[x.Solver] = x
	}
	wg := float64(row["go+wg"].First.P50)
	var ts []harness.Target
	for _, s := range []string{"RunContext", "RunN+flag"} {
		for _, pre := range []bool{false, true} {
			f, label := row[s].First.P50, "fresh set"
			if pre {
				f, label = row[s].FirstPre.P50, "workers pre-created"
			}
			ts = append(ts, harness.RatioTarget(fmt.Sprintf("pow first call, %s: %s / go+wg", label, s), reasonPow, float64(f), wg, 2, false,
				fmt.Sprintf("%.1f us / %.1f us", float64(f)/1e3, wg/1e3)))
		}
	}
	wg0 := float64(row["go+wg"].First0.P50)
	for _, s := range []string{"RunContext", "RunN+flag"} {
		f := float64(row[s].First0.P50)
		ts = append(ts, harness.RatioTarget(fmt.Sprintf("pow first one-hash call, fresh set: %s / go+wg", s), reasonPow, f, wg0, 2, false,
			fmt.Sprintf("%.1f us / %.1f us", f/1e3, wg0/1e3)))
	}
	for _, t := range r.Tails {
		if t.Solver == "RunContext" {
			ts = append(ts, harness.RatioTarget("pow one-hash RunContext p99 / 5 us", reasonPow, float64(t.Lat.P99), float64(5*time.Microsecond), 1, false,
				fmt.Sprintf("p99 %.1f us (clean calls %.1f us)", float64(t.Lat.P99)/1e3, float64(t.CleanP99)/1e3)))
		}
	}
	return ts
}
