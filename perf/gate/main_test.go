package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The ants package starts a default pool at init, whose two goroutines live
// as long as the process; every goroutine this package starts must end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"))
}

// fake returns a result where turning hint off multiplies every scenario's
// time by other, and its targets' times by target.
func fake(off string, target, other float64) result {
	r := result{Go: "go-test", Procs: 2, NS: map[string]map[string]float64{}}
	for _, sc := range scenarios() {
		m := map[string]float64{}
		for _, s := range settings() {
			m[s.name] = 1000
		}
		f := other
		for _, t := range targets[off] {
			if t == sc.name {
				f = target
			}
		}
		m["-"+off] = 1000 * f
		r.NS[sc.name] = m
	}
	return r
}

// TestVerdict: a hint that pays 10% on a target and costs nothing elsewhere
// is kept; one that also costs 5% elsewhere, or pays too little, is not.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		target, other float64
		want          string
	}{
		{1.10, 1.00, "keep"},
		{1.10, 0.95, "delete"},
		{1.03, 1.00, "delete"},
	} {
		var out bytes.Buffer
		rels := []string{"local", "next"}
		r := fake("load", tc.target, tc.other)
		report(&out, rels, map[string][]result{"local": {r}, "next": {r}}, 1, 1)
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "load ") {
				line = l
			}
		}
		if !strings.Contains(line, tc.want) {
			t.Errorf("pays %.2f, elsewhere %.2f: verdict line %q; want %q", tc.target, tc.other, line, tc.want)
		}
	}
}

func TestRotateKeepsEverySetting(t *testing.T) {
	for r := range 6 {
		s := settings()
		rotate(s, r)
		seen := map[string]bool{}
		for _, x := range s {
			seen[x.name] = true
		}
		if len(seen) != len(settings()) {
			t.Errorf("round %d: %d distinct settings; want %d", r, len(seen), len(settings()))
		}
	}
}

// A cost elsewhere within the run-to-run spread of the all-on time there is
// no cost (the gate cannot tell it from noise); one above it is.
func TestVerdictWeighsCostsAgainstTheSpread(t *testing.T) {
	for _, tc := range []struct {
		other      float64 // hint off / all on, off the targets
		allOnRange float64 // the second process's all-on time over the first's
		want       string
	}{
		{0.95, 1.10, "keep"},   // 5% cost, 10% spread
		{0.85, 1.10, "delete"}, // 15% cost, 10% spread
	} {
		a := fake("load", 1.10, tc.other)
		b := fake("load", 1.10, tc.other)
		for sc, m := range b.NS {
			for s := range m {
				b.NS[sc][s] = a.NS[sc][s] * tc.allOnRange
			}
		}
		var out bytes.Buffer
		rels := []string{"local", "next"}
		report(&out, rels, map[string][]result{"local": {a, b}, "next": {a, b}}, 2, 1)
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "load ") {
				line = l
			}
		}
		if !strings.Contains(line, tc.want) {
			t.Errorf("elsewhere %.2f, spread %.0f%%: verdict line %q; want %q", tc.other, 100*(tc.allOnRange-1), line, tc.want)
		}
	}
}
