package contended

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// contendedRow returns a method row with the given median speedups.
func contendedRow(name string, medians ...float64) contendedMethod {
	return contendedMethod{Impl: name, Median: medians, P25: medians, P75: medians, CPUPerCallNS: []float64{10, 20, 30}}
}

// contendedChildOf returns a child result with go+WaitGroup at wg and every
// workgang call at the speedups calls gives it (or at good, the default).
func contendedChildOf(wg []float64, calls map[string][]float64) *contendedChild {
	good := []float64{2, 2, 2}
	ch := &contendedChild{Methods: []contendedMethod{contendedRow(runners.NameSerial, 20e3, 200e3, 2e6), contendedRow(runners.NameWaitGroup, wg...)}}
	for _, name := range contendedCalls {
		sp, ok := calls[name]
		if !ok {
			sp = good
		}
		ch.Methods = append(ch.Methods, contendedRow(name, sp...))
	}
	return ch
}

// TestContendedVerdicts checks the verdict: a call passes when at every grain
// it reaches go+WaitGroup's speedup and 0.95; the cell names the grain where
// it falls furthest below the bar; idle and skipped conditions are not
// judged; the ForRange check applies to the one-busy condition only.
func TestContendedVerdicts(t *testing.T) {
	grains := contendedGrainsNS
	conds := []contendedCondResult{
		{contendedCond: contendedCond{Key: "idle"}, Child: contendedChildOf([]float64{9, 9, 9}, nil)},
		{contendedCond: contendedCond{Key: "one-busy", Loaded: true, OneBusy: true}, Child: contendedChildOf([]float64{0.9, 1.1, 1.3}, map[string][]float64{
			runners.NameForRange: {1.0, 1.19, 1.4},  // passes every bar, but not the 1.2 check at 200 us
			nameRunContext:       {0.94, 1.2, 1.5},  // below the floor at 20 us (WG is lower there)
			runners.NameWorkgang: {1.0, 1.05, 1.25}, // below WG at 200 us (0.955) and 2 ms (0.96): 200 us is worse
		})},
		{contendedCond: contendedCond{Key: "one-cpu", Loaded: true}, Child: contendedChildOf([]float64{0.5, 0.5, 0.5}, map[string][]float64{
			runners.NameTeam: {0.95, 0.95, 0.95}, // exactly at the floor: passes
		})},
		{contendedCond: contendedCond{Key: "quota", Loaded: true}, Skipped: "no cgroup"},
	}
	vs, cs := contendedVerdicts(conds, grains)
	byKey := map[string]contendedVerdict{}
	for _, v := range vs {
		byKey[v.Cond+"/"+v.Impl] = v
	}
	assert.Len(t, vs, 2*len(contendedCalls), "one verdict per call in each measured loaded condition")
	tests := []struct {
		key     string
		pass    bool
		grainNS float64
		speedup float64
		barIsWG bool
	}{
		{"one-busy/" + runners.NameForRange, true, 20e3, 1.0, false}, // closest to its bar (1.0/0.95) at 20 us
		{"one-busy/" + nameRunContext, false, 20e3, 0.94, false},
		{"one-busy/" + runners.NameWorkgang, false, 200e3, 1.05, true},
		{"one-busy/" + runners.NameTeam, true, 2e6, 2, true},
		{"one-cpu/" + runners.NameTeam, true, 20e3, 0.95, false},
		{"one-cpu/" + runners.NameForRange, true, 20e3, 2, false},
	}
	for _, tt := range tests {
		v, ok := byKey[tt.key]
		if !assert.True(t, ok, "no verdict for %s", tt.key) {
			continue
		}
		got := []any{v.Pass, v.GrainNS, v.Speedup, v.BarIsWG}
		want := []any{tt.pass, tt.grainNS, tt.speedup, tt.barIsWG}
		assert.Equal(t, want, got, "%s: got %v; want %v", tt.key, got, want)
	}
	require.Len(t, cs, 1, "the ForRange check, one-busy only")
	assert.Equal(t, contendedCheck{Cond: "one-busy", Speedup: 1.19, Want: 1.2, Pass: false}, cs[0])
}

// TestSummarizeRounds checks the per-grain figures: serial's own times, and
// a method's speedup paired per round, with the quartiles over the rounds.
func TestSummarizeRounds(t *testing.T) {
	serial := []float64{100, 100, 400, 100, 100, 100, 100, 100} // an outlier round of serial
	mid, p25, p75 := summarizeRounds(serial, serial, true)
	assert.Equal(t, []float64{100, 100, 100}, []float64{mid, p25, p75}, "serial: median and quartiles of its time")
	times := []float64{50, 100, 400, 200, 100, 25, 100, 100}
	// Per round: 2, 1, 1, 0.5, 1, 4, 1, 1; sorted 0.5 1 1 1 1 1 2 4.
	mid, p25, p75 = summarizeRounds(serial, times, false)
	assert.Equal(t, []float64{1, 1, 1}, []float64{mid, p25, p75}, "paired per round: the outlier round pairs with itself")
	mid, p25, p75 = summarizeRounds([]float64{100, 100, 100, 100}, []float64{100, 50, 200, 25}, false)
	assert.Equal(t, []float64{1.5, 0.5, 2}, []float64{mid, p25, p75}, "median of 0.5 1 2 4, nearest-rank quartiles")
}

// TestContendedFlags checks the section's wiring into the command line: it
// is opt-in (only -scenario contended selects it; package harness tests
// what that means), and -iters and -runs size it.
func TestContendedFlags(t *testing.T) {
	assert.True(t, Section.OptIn)
	command := harness.Command{Sections: []harness.Section{Section}}
	c, err := command.Parse([]string{"-scenario", "contended"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"contended"}, c.Scenarios)
	rounds, budget := contendedSizes(c)
	assert.Equal(t, []float64{3 * harness.DefaultIters, 10e6}, []float64{float64(rounds), budget}, "default: 3 x -iters rounds, -runs us per batch")
	c, err = command.Parse([]string{"-scenario", "contended", "-quick", "-iters", "9"}, &bytes.Buffer{})
	require.NoError(t, err)
	rounds, budget = contendedSizes(c)
	assert.Equal(t, []float64{27, 1e6}, []float64{float64(rounds), budget}, "-quick shrinks the batches, -iters sets the rounds")
}

// TestContendedConds checks the conditions: idle first and not judged, the
// burners, the one-CPU condition at GOMAXPROCS 2 even for -max 1, and a
// quota below GOMAXPROCS.
func TestContendedConds(t *testing.T) {
	for _, procs := range []int{1, 2, 8} {
		cs := contendedConds(procs)
		keys := make([]string, len(cs))
		for i, c := range cs {
			keys[i] = c.Key
			assert.Equal(t, c.Key != "idle", c.Loaded, "procs %d %s: judged when loaded", procs, c.Key)
			if c.Quota {
				assert.Less(t, quotaCPUs(c.Procs), float64(c.Procs), "procs %d: the quota is below GOMAXPROCS", procs)
			}
		}
		assert.Equal(t, []string{"idle", "one-busy", "all-busy", "one-cpu", "quota"}, keys)
		assert.Equal(t, []int{0, 1, procs, 0, 0}, []int{cs[0].Burners, cs[1].Burners, cs[2].Burners, cs[3].Burners, cs[4].Burners}, "procs %d: burners", procs)
		assert.Equal(t, max(2, procs), cs[3].Procs, "procs %d: one CPU, GOMAXPROCS at least 2", procs)
		assert.True(t, cs[3].OneCPU && cs[1].OneBusy && !cs[2].OneBusy, "procs %d", procs)
	}
}

// TestContendedRole checks that only the two hidden arguments make the
// binary a child or a burner: a burner past its deadline exits at once, the
// perf command's arguments pass through; a child with a bad spec fails.
func TestContendedRole(t *testing.T) {
	for _, args := range [][]string{nil, {"-scenario", "contended"}, {contendedChildArg}, {contendedBurnerArg, "1", "x"}} {
		_, ok := Role(args)
		assert.False(t, ok, "args %q", args)
	}
	code, ok := Role([]string{contendedBurnerArg, fmt.Sprint(time.Now().Add(-time.Second).UnixNano())})
	assert.Equal(t, []any{0, true}, []any{code, ok}, "burner past its deadline")
	code, ok = Role([]string{contendedBurnerArg, "soon"})
	assert.Equal(t, []any{2, true}, []any{code, ok}, "burner with a bad deadline")
	var out, errw bytes.Buffer
	assert.Equal(t, 2, contendedChildMain("{", &out, &errw), "child with a bad spec")
	assert.Contains(t, errw.String(), "perf contended child:")
}

// TestContendedChildInProcess runs a child's measurement in this process at
// the smallest sizes: every method computes serial's result (the child
// checks), the rows come in table order with a figure per grain, and the
// set and peers are closed (goleak). It checks no timing.
func TestContendedChildInProcess(t *testing.T) {
	spec := contendedSpec{Procs: runtime.GOMAXPROCS(0), NSPerElem: calibrateSlice(), GrainsNS: []float64{2e3, 20e3}, BudgetNS: 20e3, Rounds: 2,
		Deadline: time.Now().Add(time.Minute).UnixNano()}
	sj, err := json.Marshal(spec)
	require.NoError(t, err)
	var out, errw bytes.Buffer
	require.Equal(t, 0, contendedChildMain(string(sj), &out, &errw), "stderr: %s", errw.String())
	var res contendedChild
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	names := make([]string, len(res.Methods))
	for i, m := range res.Methods {
		names[i] = m.Impl
		for _, xs := range [][]float64{m.Median, m.P25, m.P75, m.CPUPerCallNS} {
			assert.Len(t, xs, len(spec.GrainsNS), "%s", m.Impl)
		}
		for g := range spec.GrainsNS {
			assert.True(t, m.P25[g] <= m.Median[g] && m.Median[g] <= m.P75[g] && m.Median[g] > 0, "%s grain %d: %v %v %v", m.Impl, g, m.P25[g], m.Median[g], m.P75[g])
		}
	}
	assert.Equal(t, contendedMethods, names)
	assert.Equal(t, spec.Procs, res.Procs)
	assert.Len(t, res.Elements, len(spec.GrainsNS))
	assert.Equal(t, []int{10, 3}, res.Calls, "budget / grain, at least 3")
	assert.Positive(t, res.Waits.WorkerCopies, "the workgang calls ran copies on workers")
}

// TestContendedChildStopsWhenDead checks that a child past its deadline
// stops before measuring instead of running on.
func TestContendedChildStopsWhenDead(t *testing.T) {
	spec := contendedSpec{Procs: runtime.GOMAXPROCS(0), NSPerElem: 1, GrainsNS: []float64{2e3}, BudgetNS: 2e3, Rounds: 1, Deadline: 1}
	sj, err := json.Marshal(spec)
	require.NoError(t, err)
	var out, errw bytes.Buffer
	assert.Equal(t, 1, contendedChildMain(string(sj), &out, &errw))
	assert.Contains(t, errw.String(), "deadline passed")
}

// TestSliceWorkChecksum checks that the checksum sees a missing block, so
// the child's check of every method against serial can fail.
func TestSliceWorkChecksum(t *testing.T) {
	s := newSliceWork(1000, 4)
	runners.Serial(4, s.copyWork)
	want := s.checksum()
	clear(s.out)
	for i := range 3 { // copy 3 never runs
		s.copyWork(i)
	}
	assert.NotEqual(t, want, s.checksum())
	s.copyWork(3)
	assert.Equal(t, want, s.checksum())
}

// TestContendedPrint checks the printed tables: every ratio labelled "higher
// is better", a skipped condition with its reason, and the verdict cells.
func TestContendedPrint(t *testing.T) {
	grains := contendedGrainsNS
	conds := []contendedCondResult{
		{contendedCond: contendedCond{Key: "one-busy", Label: "1 busy process", Loaded: true, OneBusy: true}, Setup: "1 burner",
			Child: contendedChildOf([]float64{0.9, 1.1, 1.3}, map[string][]float64{nameRunContext: {0.63, 1.2, 1.5}})},
		{contendedCond: contendedCond{Key: "quota", Label: "cgroup", Loaded: true}, Skipped: "cgroup v2: not mounted"},
	}
	var w bytes.Buffer
	for i, c := range conds {
		printCondition(&w, i+1, len(conds), c, grains)
	}
	vs, cs := contendedVerdicts(conds, grains)
	printVerdicts(&w, vs, cs, conds)
	text := w.String()
	for _, want := range []string{
		"[1/2] one-busy: 1 busy process", "setup: 1 burner", "[2/2] quota: cgroup", "skipped: cgroup v2: not mounted",
		"MISS 20us 0.63<0.95", "PASS 2ms 2.00>=WG 1.30", "CPU time / serial's (lower is better)", "1.00/1.00/1.00", "workgang ForRange at ~200us 2.00x serial (higher is better), want >= 1.2: PASS",
	} {
		assert.Contains(t, text, want)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "speedup over serial") || strings.Contains(line, "x serial") || strings.HasPrefix(line, "verdict") {
			assert.Contains(t, line, "higher is better", "a ratio without its direction: %q", line)
		}
		if strings.Contains(line, "CPU time") {
			assert.Contains(t, line, "lower is better", "a ratio without its direction: %q", line)
		}
	}
	i := slices.IndexFunc(strings.Split(text, "\n"), func(l string) bool { return strings.HasPrefix(l, "quota") })
	require.GreaterOrEqual(t, i, 0, "the skipped condition has a verdict row")
	assert.Contains(t, strings.Split(text, "\n")[i], "skipped")
}
