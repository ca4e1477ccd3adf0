package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// The targets section is an opt-in check (-targets): the project's goals for
// its own performance, each a ratio of two figures measured in this run (so
// a loaded machine slows both sides) with the reason the goal exists. Each
// section states its own goals (Section.Targets); the targets section checks
// those of every section that ran, in table order. A MISS is a figure to look
// at, not an error: the tool exits 0 either way.

// Target statuses.
const (
	StatusPass = "PASS"
	StatusMiss = "MISS"
	StatusNA   = "N/A" // not measurable in this run (e.g. the sweep is too coarse)
)

// Target is one performance goal and how this run measured it.
type Target struct {
	Name   string  `json:"name"`
	Reason string  `json:"reason"` // why the goal exists, in one sentence
	Goal   string  `json:"goal"`   // e.g. "<= 0.4"
	Limit  float64 `json:"limit"`  // the largest passing ratio (the smallest with AtLeast)
	Ratio  float64 `json:"ratio"`  // the measured ratio
	// AtLeast marks a goal the ratio must reach (Ratio >= Limit) rather than
	// stay under.
	AtLeast bool `json:"at_least,omitempty"`
	// UpperBound marks a ratio that is only known to be at most Ratio.
	UpperBound bool   `json:"upper_bound,omitempty"`
	Status     string `json:"status"`
	Detail     string `json:"detail"` // the figures the ratio comes from
}

// MarshalJSON encodes t with ratio null when nothing was measured (N/A).
func (t Target) MarshalJSON() ([]byte, error) {
	type plain Target // without this method
	out := struct {
		plain
		Ratio *float64 `json:"ratio"`
	}{plain: plain(t)}
	if t.Status != StatusNA {
		out.Ratio = &t.Ratio
	}
	return json.Marshal(out)
}

// RatioTarget is the one constructor of targets: the goal num/den <= limit
// (>= limit if atLeast), for the reason given; detail says where num and den
// come from. A zero or missing numerator or denominator makes it N/A.
func RatioTarget(name, reason string, num, den, limit float64, atLeast bool, detail string) Target {
	op := "<="
	if atLeast {
		op = ">="
	}
	t := Target{Name: name, Reason: reason, Goal: fmt.Sprintf("%s %g", op, limit), Limit: limit, AtLeast: atLeast, Detail: detail}
	na := num <= 0 || den <= 0
	if !na {
		t.Ratio = num / den
	}
	ok := t.Ratio <= limit
	if atLeast {
		ok = t.Ratio >= limit
	}
	t.Status = PassIf(ok, na)
	return t
}

// PassIf returns PASS if ok, else MISS. With na it returns N/A whatever ok.
func PassIf(ok, na bool) string {
	switch {
	case na:
		return StatusNA
	case ok:
		return StatusPass
	}
	return StatusMiss
}

// TargetsSection is the targets section: it needs the sections named in
// needs (the others' targets count when they ran) and is selected by
// -targets.
func TargetsSection(needs ...string) Section {
	return Section{
		Name:  "targets",
		Title: "targets: the project's performance goals, checked on this run's figures (opt-in: -targets)",
		Needs: needs,
		Run:   runTargets,
		OptIn: true,
	}
}

// runTargets checks the targets of every section that ran, in table order.
func runTargets(h *Harness) (any, error) {
	fmt.Fprintln(h.Out, "each target: a ratio of two figures of this run (medians), the goal, and why the goal exists;")
	fmt.Fprintln(h.Out, "a MISS is a figure to look at, not an error (both sides ran on the same machine at about the same time)")
	ts := []Target{}
	for _, s := range h.sections {
		if res, ok := h.Results[s.Name]; ok && s.Targets != nil {
			ts = append(ts, s.Targets(h, res)...)
		}
	}
	printTargets(h.Out, ts)
	return ts, nil
}

// printTargets prints the targets grouped under their reasons (in the order
// the reasons first appear) and the counts of every status.
func printTargets(w io.Writer, ts []Target) {
	var reasons []string
	byReason := map[string][]Target{}
	for _, t := range ts {
		if _, ok := byReason[t.Reason]; !ok {
			reasons = append(reasons, t.Reason)
		}
		byReason[t.Reason] = append(byReason[t.Reason], t)
	}
	for _, r := range reasons {
		fmt.Fprintf(w, "\nwhy: %s\n", r)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range byReason[r] {
			m := fmt.Sprintf("%.3f", t.Ratio)
			if t.UpperBound {
				m = "<=" + m
			}
			if t.Status == StatusNA {
				m = "-"
			}
			fmt.Fprintf(tw, "  %s\t%s\tgoal %s\t%s\t%s\n", t.Status, t.Name, t.Goal, m, t.Detail)
		}
		tw.Flush()
	}
	count := map[string]int{}
	for _, t := range ts {
		count[t.Status]++
	}
	fmt.Fprintf(w, "\n%d targets: %d PASS, %d MISS, %d N/A (not measurable in this run)\n",
		len(ts), count[StatusPass], count[StatusMiss], count[StatusNA])
}
