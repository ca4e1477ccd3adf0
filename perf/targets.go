package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Target statuses.
const (
	statusPass = "PASS"
	statusMiss = "MISS"
	statusNA   = "N/A" // not measurable in this run (e.g. the sweep is too coarse)
)

// target is one performance target and how this run measured it.
type target struct {
	Name  string  `json:"name"`
	Goal  string  `json:"goal"`  // e.g. "<= 0.4"
	Limit float64 `json:"limit"` // the largest passing ratio (the smallest with AtLeast)
	Ratio float64 `json:"ratio"` // the measured ratio
	// AtLeast marks a goal the ratio must reach (Ratio >= Limit) rather than
	// stay under.
	AtLeast bool `json:"at_least,omitempty"`
	// UpperBound marks a ratio that is only known to be at most Ratio.
	UpperBound bool   `json:"upper_bound,omitempty"`
	Status     string `json:"status"`
	Detail     string `json:"detail"` // the figures the ratio comes from
}

// MarshalJSON encodes t with ratio null when nothing was measured (N/A).
func (t target) MarshalJSON() ([]byte, error) {
	type plain target // without this method
	out := struct {
		plain
		Ratio *float64 `json:"ratio"`
	}{plain: plain(t)}
	if t.Status != statusNA {
		out.Ratio = &t.Ratio
	}
	return json.Marshal(out)
}

// ratioGoal describes a target on the peers section: at level, row num's
// median average divided by row den's is at most limit.
type ratioGoal struct {
	level, num, den string
	limit           float64
}

// ratioGoals are the dispatch targets: empty-task ratios against the peers.
var ratioGoals = []ratioGoal{
	{"min", nameCaller, nameWorkers, 1.0 / 20},
	{"min", nameCaller, nameDirect, 10},
	{"full", nameWorkers, nameWaitGroup, 0.4},
	{"full", nameWorkers, nameErrgroup, 0.4},
	{"full", nameWorkers, nameChanPool, 0.5},
	{"full", nameWorkers, namePingPong, 4},
}

// breakEvenLimit is the break-even target: workgang's break-even grain at
// n = 2 is at most this fraction of go + WaitGroup's.
const breakEvenLimit = 0.5

// runTargets evaluates every target on the peers and grain results.
func runTargets(h *harness) (any, error) {
	peers, _ := h.results["peers"].(*peersResult)
	grain, _ := h.results["grain"].(*grainResult)
	if peers == nil || grain == nil {
		return nil, fmt.Errorf("targets need the peers and grain results")
	}
	ts := existingTargets(h, peers, grain)
	ts = append(ts, emptyTaskTargets(h.out, peers)...)
	if r, ok := h.results["surplus"].(*surplusResult); ok {
		ts = append(ts, surplusTargets(r)...)
	}
	if r, ok := h.results["pause"].(*pauseResult); ok {
		ts = append(ts, pauseTargets(r)...)
	}
	if r, ok := h.results["kernel"].(*kernelResult); ok {
		ts = append(ts, kernelTargets(r)...)
	}
	printTargets(h.out, ts)
	return ts, nil
}

// existingTargets are the dispatch targets: the empty-task ratios, no
// allocations, and the break-even grains.
func existingTargets(h *harness, peers *peersResult, grain *grainResult) []target {
	var ts []target
	for _, g := range ratioGoals {
		ts = append(ts, g.eval(peers))
	}
	ts = append(ts, allocTarget(peers))
	for _, mode := range []string{nameCaller, nameWorkers} {
		t := breakEvenTarget(grain, mode)
		if h.header.GOMAXPROCS < 2 {
			// Nothing runs in parallel: any speedup above 1 is noise.
			t.Ratio, t.UpperBound, t.Status = 0, false, statusNA
			t.Detail = "GOMAXPROCS=1: " + t.Detail
		}
		ts = append(ts, t)
	}
	return ts
}

// eval measures the goal on the peers result.
func (g ratioGoal) eval(p *peersResult) target {
	t := target{
		Name:  fmt.Sprintf("%s: %s / %s", g.level, g.num, g.den),
		Goal:  fmt.Sprintf("<= %g", g.limit),
		Limit: g.limit,
	}
	num, den := p.row(g.level, g.num), p.row(g.level, g.den)
	if num == nil || den == nil || den.MedianAvgNS == 0 {
		t.Status, t.Detail = statusNA, "not measured"
		return t
	}
	t.Ratio = num.MedianAvgNS / den.MedianAvgNS
	t.Status = passIf(t.Ratio <= g.limit, false)
	t.Detail = fmt.Sprintf("%.1f ns / %.1f ns (n=%d)", num.MedianAvgNS, den.MedianAvgNS, levelN(p, g.level))
	return t
}

// levelN returns the n of the peers group labelled label.
func levelN(p *peersResult, label string) int {
	for _, g := range p.Groups {
		if g.Label == label {
			return g.N
		}
	}
	return 0
}

// allocTarget checks that no workgang row allocates per run.
func allocTarget(p *peersResult) target {
	t := target{Name: "allocs/run of workgang rows (max)", Goal: "<= 0", Limit: 0}
	worst := ""
	for _, g := range p.Groups {
		for _, r := range g.Rows {
			if isWorkgang(r.Impl) && (worst == "" || float64(r.AllocsPerRun) > t.Ratio) {
				t.Ratio = float64(r.AllocsPerRun)
				worst = fmt.Sprintf("%s %s (n=%d)", g.Label, r.Impl, g.N)
			}
		}
	}
	t.Status = passIf(t.Ratio <= 0, false)
	t.Detail = "worst: " + worst
	return t
}

// breakEvenTarget compares mode's break-even grain at n = 2 with go +
// WaitGroup's.
func breakEvenTarget(g *grainResult, mode string) target {
	t := target{
		Name:  fmt.Sprintf("n=2 break-even: %s / %s", mode, nameWaitGroup),
		Goal:  fmt.Sprintf("<= %g", breakEvenLimit),
		Limit: breakEvenLimit,
	}
	s := g.sweep(2)
	if s == nil {
		t.Status, t.Detail = statusNA, "no sweep at n=2"
		return t
	}
	m, wg := s.impl(mode), s.impl(nameWaitGroup)
	t.Detail = fmt.Sprintf("%s / %s", fmtBreakEven(m.BreakEvenNS, m.BreakEvenKind), fmtBreakEven(wg.BreakEvenNS, wg.BreakEvenKind))
	compareBreakEven(&t, m, wg)
	return t
}

// compareBreakEven sets t's ratio and status from two break-even grains,
// treating the open-ended kinds (below the sweep, never) conservatively.
func compareBreakEven(t *target, m, wg *grainImpl) {
	switch {
	case m.BreakEvenKind == beNone && wg.BreakEvenKind == beNone:
		t.Status = statusNA // neither pays off anywhere in the sweep
	case m.BreakEvenKind == beNone:
		t.Status = statusMiss
	case wg.BreakEvenKind == beNone:
		t.Status = statusPass // only workgang pays off: the ratio is 0
	case m.BreakEvenKind == beBelow && wg.BreakEvenKind == beBelow:
		t.Status = statusNA // both pay off at the smallest grain
	default:
		t.Ratio = m.BreakEvenNS / wg.BreakEvenNS
		t.UpperBound = m.BreakEvenKind == beBelow
		t.Status = passIf(t.Ratio <= t.Limit, false)
		if t.UpperBound && t.Status == statusMiss {
			t.Status = statusNA // an upper bound above the limit decides nothing
		}
	}
}

// passIf returns PASS if ok, else MISS. With na it returns N/A whatever ok.
func passIf(ok, na bool) string {
	switch {
	case na:
		return statusNA
	case ok:
		return statusPass
	}
	return statusMiss
}

// ratioTarget is the target num/den <= limit (>= limit if atLeast); detail
// says where num and den come from. A zero or missing denominator or
// numerator makes it N/A.
func ratioTarget(name string, num, den, limit float64, atLeast bool, detail string) target {
	op := "<="
	if atLeast {
		op = ">="
	}
	t := target{Name: name, Goal: fmt.Sprintf("%s %g", op, limit), Limit: limit, AtLeast: atLeast, Detail: detail}
	na := num <= 0 || den <= 0
	if !na {
		t.Ratio = num / den
	}
	ok := t.Ratio <= limit
	if atLeast {
		ok = t.Ratio >= limit
	}
	t.Status = passIf(ok, na)
	return t
}

// printTargets prints one line per target.
func printTargets(w io.Writer, ts []target) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tgoal\tmeasured\tstatus\tfrom")
	for _, t := range ts {
		m := fmt.Sprintf("%.3f", t.Ratio)
		if t.UpperBound {
			m = "<=" + m
		}
		if t.Status == statusNA {
			m = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Goal, m, t.Status, t.Detail)
	}
	tw.Flush()
	pass := 0
	for _, t := range ts {
		if t.Status == statusPass {
			pass++
		}
	}
	fmt.Fprintf(w, "%d of %d targets PASS\n", pass, len(ts))
}
