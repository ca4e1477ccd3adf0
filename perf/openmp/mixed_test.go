package openmp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/workgang/workgang/workers"
)

// TestMixed runs the mode at tiny sizes and checks its structure and
// accounting: every measured mode has a row with an alone side and one mixed
// side per gap, the set's counters add up to the runs and copies the tests
// made, the others were timed, and the JSON, output and figure carry it.
func TestMixed(t *testing.T) {
	withoutCompilers(t)
	o := tinyOptions()
	var out bytes.Buffer
	res, err := Run(context.Background(), &out, o)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Mixed
	if m == nil {
		t.Fatal("no mixed result")
	}
	if m.Batch != 2 || m.Batches != 3 || m.ForkJoins != 2 || m.Limit != MixedLimit || len(m.Gaps) != 2 {
		t.Errorf("mixed header %+v; want batch 2, 3 batches, 2 fork-joins, limit %v, 2 gaps", m, MixedLimit)
	}
	for i, g := range m.Gaps {
		if !(g.WorkNS > 0) || !(g.OthersAloneNS > 0) || !(g.OthersMixedNS > 0) {
			t.Errorf("gap %d: %+v; want positive work and times", i, g)
		}
	}
	if m.Gaps[1].WorkNS <= m.Gaps[0].WorkNS {
		t.Errorf("gaps' work %v, %v; want the order of the options (200, 2000 ns)", m.Gaps[0].WorkNS, m.Gaps[1].WorkNS)
	}
	measured := 0
	for _, c := range res.Constructs {
		for _, row := range c.Rows {
			if row.Runtime == workgang && row.MedianNS != nil {
				measured++
			}
		}
	}
	if len(m.Rows) != measured {
		t.Errorf("got %d mixed rows; want one per measured workgang mode (%d)", len(m.Rows), measured)
	}
	runs := uint64(res.Rounds * m.Batches * m.Batch) // per side and row
	for _, row := range m.Rows {
		if row.Alone.Ratio != nil || len(row.Mixed) != 2 || len(row.Alone.RoundsNS) != res.Rounds {
			t.Errorf("%s %s: alone ratio %v, %d mixed sides, %d rounds; want null, 2, %d", row.Construct, row.Mode, row.Alone.Ratio, len(row.Mixed), len(row.Alone.RoundsNS), res.Rounds)
			continue
		}
		for gi, s := range row.Mixed {
			if s.Ratio == nil || !(*s.Ratio > 0) || *s.RatioMin > *s.RatioMax || len(s.RoundsNS) != res.Rounds {
				t.Errorf("%s %s gap %d: ratio %v min %v max %v, %d rounds; want positive, ordered, %d rounds", row.Construct, row.Mode, gi, s.Ratio, s.RatioMin, s.RatioMax, len(s.RoundsNS), res.Rounds)
			}
		}
		sides := append([]MixedSide{row.Alone}, row.Mixed...)
		for si, s := range sides {
			c := s.Copies
			switch {
			case row.Mode == modeTeam:
				// One RunTeam per batch, every copy on a worker.
				if c.Runs != uint64(res.Rounds*m.Batches) || c.WorkerCopies != 2*c.Runs || c.CallerCopies != 0 {
					t.Errorf("%s team side %d: %+v; want %d runs of 2 worker copies", row.Construct, si, c, res.Rounds*m.Batches)
				}
			default:
				// One run of 2 copies per repetition.
				if c.Runs != runs || c.WorkerCopies+c.CallerCopies != 2*runs {
					t.Errorf("%s %s side %d: %+v; want %d runs of 2 copies", row.Construct, row.Mode, si, c, runs)
				}
				if !strings.Contains(row.Mode, modeCaller) && c.CallerCopies != 0 {
					t.Errorf("%s %s side %d: %d caller copies of a mode that runs on workers only", row.Construct, row.Mode, si, c.CallerCopies)
				}
			}
		}
	}
	text := out.String()
	for _, want := range []string{"mixed process", "go+WaitGroup", "errgroup", "mixed/alone", "W=0.2us", "W=2us", "with workgang's set idle"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"mixed":{`, `"others_alone_ns"`, `"worker_copies"`, `"ratio":null`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	path, err := Plot(res, t.TempDir(), "caption")
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("mixed process")) {
		t.Errorf("the figure has no mixed-process panel")
	}
}

func TestMixedOff(t *testing.T) {
	withoutCompilers(t)
	o := tinyOptions()
	o.Mixed.Off = true
	var out bytes.Buffer
	res, err := Run(context.Background(), &out, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mixed != nil || strings.Contains(out.String(), "mixed process") {
		t.Errorf("mode off: result %+v, output mentions it: %v; want neither", res.Mixed, strings.Contains(out.String(), "mixed process"))
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"mixed":null`)) {
		t.Errorf("JSON lacks \"mixed\":null")
	}
}

// TestBatched checks the batching: Batches calls of the test with Batch
// repetitions each, each after one call of between, and times that are
// per repetition and per call.
func TestBatched(t *testing.T) {
	w := workers.New("openmp-test", 2)
	defer w.Close()
	m := &mixedSide{o: MixedOptions{Batch: 3, Batches: 5}, w: w}
	var calls, reps, betweens int
	order := ""
	test := func(k int) {
		calls++
		reps += k
		order += "t"
		work(1000)
	}
	var batches []float64
	perRep, perBetween := m.batched(test, func() { betweens++; order += "b" }, &batches)
	if calls != 5 || reps != 15 || betweens != 5 || order != strings.Repeat("bt", 5) {
		t.Errorf("got %d calls, %d reps, %d betweens, order %q; want 5, 15, 5, %q", calls, reps, betweens, order, strings.Repeat("bt", 5))
	}
	if !(perRep > 0) || !(perBetween >= 0) {
		t.Errorf("per repetition %v ns, per between %v ns; want positive, non-negative", perRep, perBetween)
	}
	if len(batches) != 5 || !(batches[0] > 0) {
		t.Errorf("batches: %v; want 5 positive times per repetition", batches)
	}
	calls, order = 0, ""
	if _, pb := m.batched(test, nil, &batches); calls != 5 || order != strings.Repeat("t", 5) || pb != 0 || len(batches) != 10 {
		t.Errorf("alone: %d calls, order %q, between time %v; want 5, %q, 0", calls, order, pb, strings.Repeat("t", 5))
	}
}

func TestMixedRowWorst(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := MixedRow{Mixed: []MixedSide{{Ratio: f(1.05)}, {Ratio: f(1.4)}, {Ratio: f(0.9)}}}
	if got, gi := r.Worst(); got != 1.4 || gi != 1 {
		t.Errorf("Worst() = %v, %d; want 1.4, 1", got, gi)
	}
	r = MixedRow{Mixed: []MixedSide{{Ratio: f(0.5)}}}
	if got, gi := r.Worst(); got != 0.5 || gi != 0 {
		t.Errorf("Worst() = %v, %d; want 0.5, 0", got, gi)
	}
}

// TestMixedTails checks the percentiles over the batches and each ratio at
// its own worst gap: a row can meet the goal at p50 and miss it at p99.
func TestMixedTails(t *testing.T) {
	batches := make([]float64, 100)
	for i := range batches {
		batches[i] = float64(100 - i) // 100 down to 1
	}
	side := sideOf([]float64{5}, batches, CopyStats{})
	if side.P50NS != 50 || side.P99NS != 99 || side.MedianNS != 5 {
		t.Errorf("sideOf: p50 %v, p99 %v, median %v; want 50, 99, 5", side.P50NS, side.P99NS, side.MedianNS)
	}
	row := MixedRow{Title: "BARRIER", Mode: "team", Alone: MixedSide{P50NS: 100, P99NS: 200},
		Mixed: []MixedSide{{P50NS: 105, P99NS: 500}, {P50NS: 108, P99NS: 220}}}
	if p50, p99 := row.Tails(); p50 != 1.08 || p99 != 2.5 {
		t.Errorf("Tails() = %v, %v; want 1.08, 2.5", p50, p99)
	}
	m := &Mixed{Limit: MixedLimit, Rows: []MixedRow{row, {Title: "PARALLEL", Mode: "RunN caller-runs", Alone: MixedSide{P50NS: 100, P99NS: 100},
		Mixed: []MixedSide{{P50NS: 130, P99NS: 105}}}}}
	lines := m.verdict()
	want := "p50 within the goal in 1 of 2 rows, the worst PARALLEL RunN caller-runs at 1.30x; p99 within it in 1 of 2 rows, the worst BARRIER team at 2.50x"
	if len(lines) != 1 || !strings.HasSuffix(lines[0], want) || !strings.Contains(lines[0], "goal <= 1.10, lower is better") {
		t.Errorf("verdict: got %q; want a line ending %q", lines, want)
	}
	if got := (&Mixed{}).verdict(); got != nil {
		t.Errorf("verdict without rows: got %q; want none", got)
	}
}

func TestCopyStats(t *testing.T) {
	var c CopyStats
	c.add(workers.Stats{Runs: 1, CallerCopies: 2, WorkerCopies: 3, Parks: 4, Wakeups: 5},
		workers.Stats{Runs: 11, CallerCopies: 7, WorkerCopies: 18, Parks: 5, Wakeups: 5})
	want := CopyStats{Runs: 10, CallerCopies: 5, WorkerCopies: 15, Parks: 1}
	if c != want {
		t.Errorf("add: got %+v; want %+v", c, want)
	}
	if got := c.WorkerShare(); got != 0.75 {
		t.Errorf("WorkerShare() = %v; want 0.75", got)
	}
	if got := per100(c); got != 10 {
		t.Errorf("per100 = %v; want 10", got)
	}
	if got := (CopyStats{}).WorkerShare(); got != 0 {
		t.Errorf("zero WorkerShare() = %v; want 0", got)
	}
}
