package interleaved

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/perf/internal/forkjoin"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// countCopies replaces the work of every phase of o by a wrapper that
// counts, per copy id, how often it ran, and returns the counters.
func countCopies(o *op) [][]atomic.Int64 {
	counts := make([][]atomic.Int64, len(o.phases))
	for p := range o.phases {
		ph := &o.phases[p]
		c := make([]atomic.Int64, ph.n)
		counts[p] = c
		orig := ph.work
		*ph = newPhase(ph.n, ph.callerRuns, func(i int) {
			c[i].Add(1) // an id outside [0, n) panics: the test fails
			orig(i)
		})
	}
	return counts
}

// TestEveryCopyOnce runs every op on every implementation, through the
// drivers' batch, and checks that each copy of each phase ran exactly once
// per run of the op. Size 4 gives the pause's three parallelisms (1, 2, 4).
func TestEveryCopyOnce(t *testing.T) {
	const size, runs = 4, 3
	st := startAll(size)
	defer func() { require.NoError(t, st.stop()) }()
	for i, im := range impls {
		for _, o := range buildOps(size, 1) {
			counts := countCopies(o)
			o.batch(st.fj[i], runs)
			for p, c := range counts {
				require.Len(t, c, o.phases[p].n)
				for id := range c {
					assert.Equal(t, int64(runs), c[id].Load(), "%s, %s, phase %d, copy %d", im.name, o.Name(), p, id)
				}
			}
		}
	}
}

// TestMeasureOpRunsEveryCopy runs one op through measureOp (calibration,
// alone and interleaved rounds) and checks that every copy ran as often as
// every other of its phase, and that every implementation has a figure of
// one batch per round.
func TestMeasureOpRunsEveryCopy(t *testing.T) {
	const size = 2
	st := startAll(size)
	defer func() { require.NoError(t, st.stop()) }()
	o := pauseOp(size, 1)
	counts := countCopies(o)
	sz := sizes{Rounds: minRounds, WorkgangBatchNS: 2e5, OtherBatchNS: 1e5}
	r := measureOp(o, st, sz, func(string, ...any) {})
	total := counts[0][0].Load()
	assert.Positive(t, total)
	for p, c := range counts {
		for id := range c {
			assert.Equal(t, total, c[id].Load(), "phase %d copy %d", p, id)
		}
	}
	require.Len(t, r.Interleaved, len(impls), "workgang, every peer and serial")
	for _, x := range append([]ImplResult{r.Alone}, r.Interleaved...) {
		assert.Len(t, x.BatchNS, minRounds, x.Impl)
		assert.Positive(t, x.Runs, x.Impl)
		assert.Positive(t, x.MedianNS, x.Impl)
		assert.True(t, x.MinNS <= x.MedianNS && x.MedianNS <= x.MaxNS, "%s: min %v median %v max %v", x.Impl, x.MinNS, x.MedianNS, x.MaxNS)
	}
}

// TestWorsePicksLarger checks that the worse of workgang's two figures is
// the larger median, interleaved on a tie, and that the table marks it.
func TestWorsePicksLarger(t *testing.T) {
	d, ns := worse(Figure{MedianNS: 2000}, Figure{MedianNS: 1000})
	assert.Equal(t, DriverAlone, d)
	assert.Equal(t, 2000.0, ns)
	d, ns = worse(Figure{MedianNS: 1000}, Figure{MedianNS: 3000})
	assert.Equal(t, DriverInterleaved, d)
	assert.Equal(t, 3000.0, ns)
	d, _ = worse(Figure{MedianNS: 1000}, Figure{MedianNS: 1000})
	assert.Equal(t, DriverInterleaved, d, "a tie reports what users run")

	res := syntheticResult()
	var out bytes.Buffer
	printResult(&out, res)
	text := out.String()
	assert.Contains(t, text, "5.00 [4.00-6.00]"+WorseMark, "alone 5 us is the worse of empty n=2 plain")
	assert.NotContains(t, text, "2.00 [1.90-2.10]"+WorseMark)
	assert.Contains(t, text, "30.0 [29.0-31.0]"+WorseMark, "interleaved 30 us is the worse of the grain op")
	assert.NotContains(t, text, "20.0 [19.0-29.5]"+WorseMark)
}

// syntheticResult is a result with known figures: an empty op whose alone
// figure is the worse and disagrees with the interleaved one, and a grain
// op whose interleaved figure is the worse and agrees.
func syntheticResult() *Result {
	fig := func(med, lo, hi float64) Figure { return Figure{MedianNS: med, MinNS: lo, MaxNS: hi, Runs: 100} }
	peers := func(r *OpResult, med float64) {
		for _, im := range impls[1:] {
			if im.kind == kindPeer || r.Kind == KindGrain {
				r.Interleaved = append(r.Interleaved, ImplResult{Impl: im.name, Figure: fig(med, med*0.9, med*1.1)})
				med += 1000
			}
		}
	}
	empty := OpResult{Op: "empty n=2 plain", Kind: KindEmpty, N: 2, Mode: ModePlain,
		Alone:       ImplResult{Impl: runners.NameWorkgang, Figure: fig(5000, 4000, 6000)},
		Interleaved: []ImplResult{{Impl: runners.NameWorkgang, Figure: fig(2000, 1900, 2100)}}}
	peers(&empty, 3000)
	grain := OpResult{Op: "grain W=10us n=2 caller", Kind: KindGrain, N: 2, WorkNS: 10000, Mode: ModeCaller,
		Alone:       ImplResult{Impl: runners.NameWorkgang, Figure: fig(20000, 19000, 29500)},
		Interleaved: []ImplResult{{Impl: runners.NameWorkgang, Figure: fig(30000, 29000, 31000)}}}
	peers(&grain, 25000)
	empty.judge()
	grain.judge()
	return &Result{Size: 2, NSPerUnit: 1, sizes: sizes{Rounds: minRounds}, Ops: []OpResult{empty, grain}}
}

// TestJudge checks the comparisons of the synthetic result.
func TestJudge(t *testing.T) {
	res := syntheticResult()
	e, g := res.Ops[0], res.Ops[1]
	assert.True(t, e.Disagree, "1.9-2.1 and 4-6 do not overlap")
	assert.False(t, g.Disagree, "19-29.5 and 29-31 overlap")
	assert.Equal(t, runners.NameWaitGroup, e.BestPeer, "the first peer has the lowest median")
	assert.InDelta(t, 5000.0/3000, e.XBestPeer, 1e-9)
	assert.InDelta(t, 5000.0/3000, e.XWaitGroup, 1e-9)
	assert.Nil(t, e.XSerial, "no serial for the empty op")
	require.NotNil(t, g.XSerial)
	assert.InDelta(t, 30000.0/30000, *g.XSerial, 1e-9, "serial is the sixth column: 25+5 us")
}

// TestTablePrintsRowsAndColumns checks the tables and the verdict of the
// synthetic result: every op in both tables, every implementation as a
// column, the ratio directions, the disagreement and the footnotes.
func TestTablePrintsRowsAndColumns(t *testing.T) {
	res := syntheticResult()
	var out bytes.Buffer
	printResult(&out, res)
	text := out.String()
	for _, col := range []string{"op", "runs", "allocs/run", "alone us", "interleaved us", "alone vs interleaved", "best peer",
		"x best peer", "x " + runners.NameWaitGroup, "x serial", better("lower"), better("higher")} {
		assert.Contains(t, text, col)
	}
	for _, im := range impls[1:] {
		assert.Contains(t, text, im.name, "column %s", im.name)
	}
	for _, o := range res.Ops {
		assert.Equal(t, 2, strings.Count(text, o.Op), "op %s in both tables", o.Op)
	}
	assert.Contains(t, text, DifferMark+": interleaved 2.50x faster", "empty: 2 us interleaved against 5 alone")
	assert.Contains(t, text, "overlap")
	lines := sectionVerdict(nil, res)
	require.Len(t, lines, len(res.Ops)+2)
	assert.Contains(t, lines[0], "workgang 5.00 us (alone, the worse) against the best peer go+WaitGroup 3.00 us: 1.67x slower")
	assert.Contains(t, lines[1], "speedup over serial 1.00x")
	assert.Contains(t, lines[2], "disagree beyond their spread (ranges do not overlap) on 1 of 2 ops: empty n=2 plain (interleaved 2.50x faster)")
}

// better returns the direction line of a ratio column.
func better(way string) string { return way + " is better" }

// quickRun is one run of the section alone at -quick -max 2 with -json,
// shared by the tests that read it: exit code, stdout, stderr, JSON.
var quickRun = sync.OnceValue(func() harness.Captured {
	return harness.Command{Sections: []harness.Section{Section}}.Capture([]string{"-quick", "-max", "2"})
})

// TestQuickCompletes runs the section at -quick and checks that it
// finishes, prints every op and implementation and a verdict, writes every
// figure to JSON, and leaves no goroutine behind.
func TestQuickCompletes(t *testing.T) {
	r := quickRun()
	require.Equal(t, 0, r.Code, "stderr: %s", r.Errw)
	goleak.VerifyNone(t)
	assert.Contains(t, r.Out, "== "+Section.Title+" ==")
	assert.Regexp(t, `(?m)^verdict( withheld)?:`, r.Out)
	ops := buildOps(2, 1)
	for _, o := range ops {
		assert.Contains(t, r.Out, o.Name())
	}
	for _, im := range impls {
		assert.Contains(t, r.Out, im.name)
	}

	var rep struct {
		Sections map[string]json.RawMessage `json:"sections"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.JSONB), &rep))
	var res Result
	require.NoError(t, json.Unmarshal(rep.Sections[Section.Name], &res))
	assert.GreaterOrEqual(t, res.Rounds, minRounds)
	require.Len(t, res.Ops, len(ops))
	for i, o := range res.Ops {
		assert.Equal(t, ops[i].Name(), o.Op)
		assert.Len(t, o.Alone.BatchNS, res.Rounds, o.Op)
		want := 1 + 5 // workgang and the peers
		if o.Kind != KindEmpty {
			want++ // serial
		}
		require.Len(t, o.Interleaved, want, o.Op)
		for _, x := range o.Interleaved {
			assert.Len(t, x.BatchNS, res.Rounds, "%s %s", o.Op, x.Impl)
			assert.Positive(t, x.MedianNS, "%s %s", o.Op, x.Impl)
		}
		assert.Contains(t, []string{DriverAlone, DriverInterleaved}, o.Worse, o.Op)
		assert.NotEmpty(t, o.BestPeer, o.Op)
		assert.Positive(t, o.XBestPeer, o.Op)
		assert.Positive(t, o.XWaitGroup, o.Op)
	}
}

// TestSizes checks every configuration's rounds and batches.
func TestSizes(t *testing.T) {
	for _, args := range [][]string{nil, {"-quick"}, {"-long"}, harness.TinyFlags, {"-iters", "9"}} {
		c, err := harness.Command{Sections: []harness.Section{Section}}.Parse(args, &bytes.Buffer{})
		require.NoError(t, err, args)
		sz := sizesFor(c)
		assert.GreaterOrEqual(t, sz.Rounds, minRounds, args)
		assert.GreaterOrEqual(t, sz.Rounds, c.Iters, args)
		assert.Positive(t, sz.OtherBatchNS, args)
		assert.GreaterOrEqual(t, sz.WorkgangBatchNS, sz.OtherBatchNS, args)
	}
}

// TestPauseScriptMatchesForkjoin checks the pause op against the phases
// forkjoin's pause section reports: same n, work and modes, in order.
func TestPauseScriptMatchesForkjoin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pause.json")
	var out, errw bytes.Buffer
	c := harness.Command{Sections: []harness.Section{forkjoin.Pause}}
	require.Equal(t, 0, c.Run(append(append([]string{}, harness.TinyFlags...), "-max", "4", "-json", path), &out, &errw), errw.String())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep struct {
		Sections struct {
			Pause forkjoin.PauseResult `json:"pause"`
		} `json:"sections"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	theirs := rep.Sections.Pause.Phases
	ours := pauseOp(4, 1)
	script := forkjoin.PauseScript(4)
	require.Len(t, theirs, len(script))
	require.Len(t, ours.phases, len(script))
	for i, sp := range script {
		assert.Equal(t, theirs[i].Name, sp.Name)
		assert.Equal(t, theirs[i].N, ours.phases[i].n, sp.Name)
		assert.Equal(t, theirs[i].WorkNS, sp.WorkNS, sp.Name)
		assert.Equal(t, theirs[i].CallerRuns, ours.phases[i].callerRuns, sp.Name)
	}
	assert.Equal(t, rep.Sections.Pause.GapNS, float64(forkjoin.PauseGapNS))
	assert.Equal(t, rep.Sections.Pause.WorkNS, ours.WorkNS)
}
