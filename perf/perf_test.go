package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// runner, worker set and pool must be closed.
// With runMainEnv set, the test binary is the perf command instead (for
// TestHelpExitsZero): main parses os.Args[1:] and exits.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

// tiny are flags that run every section with the smallest sizes, so that
// the harness tests take a fraction of a second even under -race. They set
// no timing expectations.
var tiny = []string{"-quick", "-runs", "20", "-iters", "1", "-max", "2"}

// TestParseFlags checks defaults, -quick, and section selection.
func TestParseFlags(t *testing.T) {
	all := sectionNames()
	tests := []struct {
		name string
		args []string
		want config
	}{
		{"defaults", nil, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: all}},
		{"quick", []string{"-quick"}, config{Max: 3, Iters: quickIters, Runs: quickRuns, Scenarios: all, Quick: true}},
		{"quick keeps explicit sizes", []string{"-quick", "-runs", "7", "-iters", "2"}, config{Max: 3, Iters: 2, Runs: 7, Scenarios: all, Quick: true}},
		{"max and json", []string{"-max", "8", "-json", "out.json"}, config{Max: 8, Iters: defaultIters, Runs: defaultRuns, Scenarios: all, JSON: "out.json"}},
		{"pin", []string{"-pin"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: all, Pin: true}},
		{"one section", []string{"-scenario", "peers"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: []string{"peers"}}},
		{"table order and spaces", []string{"-scenario", "grain, dispatch"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: []string{"dispatch", "grain"}}},
		{"long", []string{"-long"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: all, Long: true}},
		{"targets pull their needs", []string{"-scenario", "targets"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: []string{"peers", "grain", "surplus", "pause", "kernel", "targets"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-max", "3"}, tt.args...) // the default depends on the machine
			got, err := parseFlags(args, &bytes.Buffer{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "got %+v; want %+v", got, tt.want)
		})
	}
}

// TestParseFlagsDefaultMax checks that -max defaults to a usable value.
func TestParseFlagsDefaultMax(t *testing.T) {
	got, err := parseFlags(nil, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Greater(t, got.Max, 0, "default -max is GOMAXPROCS")
}

// TestParseFlagsErrors checks that bad flags are refused with a clear message.
func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-max", "0"}, "-max 0 out of range"},
		{[]string{"-iters", "0"}, "-iters 0"},
		{[]string{"-runs", "-1"}, "-runs -1"},
		{[]string{"-compete", "-1"}, "-compete -1"},
		{[]string{"-scenario", "nope"}, `unknown section "nope"`},
		{[]string{"-scenario", ","}, "no section selected"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-bogus"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, &bytes.Buffer{})
		if assert.Error(t, err, "args %q", tt.args) {
			assert.Contains(t, err.Error(), tt.want, "args %q", tt.args)
		}
	}
}

// TestRunExitCodes checks run's exit codes for bad flags and -h.
func TestRunExitCodes(t *testing.T) {
	var out, errw bytes.Buffer
	assert.Equal(t, 2, run([]string{"-max", "0"}, &out, &errw), "bad flag")
	assert.Contains(t, errw.String(), "perf: -max 0")
	errw.Reset()
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errw), "help")
	assert.Contains(t, errw.String(), "-scenario")
}

// runMainEnv makes the test binary run the perf command's main instead of
// the tests (see TestMain), so a test can check the real exit status.
const runMainEnv = "PERF_TEST_RUN_MAIN"

// TestHelpExitsZero runs the command with -h and -help as a process and
// checks that it exits 0 and prints the usage.
func TestHelpExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		cmd := exec.Command(os.Args[0], arg)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		assert.NoError(t, err, "%s: the command must exit 0", arg)
		assert.Contains(t, stderr.String(), "-scenario", arg)
	}
}

// tinyRun is one run of the whole harness with the tiny flags, -json and
// -svg, shared by the tests that read its output (a run takes a second or
// two under -race). It returns the exit code, stdout, stderr, the JSON
// file's contents and the SVG files' contents by file name.
var tinyRun = sync.OnceValue(func() (r struct {
	code             int
	out, errw, jsonb string
	svgs             map[string]string
}) {
	dir, err := os.MkdirTemp("", "perf-test-*")
	if err != nil {
		r.code, r.errw = -1, err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	jsonPath, svgDir := filepath.Join(dir, "out.json"), filepath.Join(dir, "svg")
	var out, errw bytes.Buffer
	r.code = run(append(append([]string{}, tiny...), "-json", jsonPath, "-svg", svgDir), &out, &errw)
	b, _ := os.ReadFile(jsonPath)
	r.out, r.errw, r.jsonb = out.String(), errw.String(), string(b)
	r.svgs = map[string]string{}
	files, _ := filepath.Glob(filepath.Join(svgDir, "*.svg"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		r.svgs[filepath.Base(f)] = string(b)
	}
	return r
})

// svgText parses doc as XML and returns the root element's name and the
// character data of every text element.
func svgText(doc string) (root string, texts []string, err error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	inText := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return root, texts, nil
		}
		if err != nil {
			return root, texts, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			if tok.Name.Local == "text" {
				inText++
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				inText--
			}
		case xml.CharData:
			if inText > 0 {
				texts = append(texts, string(tok))
			}
		}
	}
}

// TestSVGPlots checks that -svg writes every plot, that each parses as SVG,
// and that each names its series (the implementations) in its text.
func TestSVGPlots(t *testing.T) {
	r := tinyRun()
	require.Equal(t, 0, r.code, "stderr: %s", r.errw)
	var grainNames, kernelNames, pauseNames []string
	for _, im := range grainImpls(&longSet{}) {
		grainNames = append(grainNames, im.name)
	}
	for _, im := range kernelImpls[1:] {
		kernelNames = append(kernelNames, im.name)
	}
	for _, im := range pauseImpls {
		pauseNames = append(pauseNames, im.name+" (pause p50")
	}
	want := map[string][]string{
		"grain-n2.svg":     append(grainNames, "serial = 1", "speedup over serial"),
		"kernel.svg":       append(kernelNames, "serial = 1", "32", "100"),
		"pause-phases.svg": append(pauseNames, "mark n=2 p", "resize-tlabs n=1 c"),
		"mark.svg":         {"serial", "static partition", "work stealing"},
	}
	for file, names := range want {
		doc, ok := r.svgs[file]
		if !assert.True(t, ok, "%s not written (have %v)", file, slices.Collect(maps.Keys(r.svgs))) {
			continue
		}
		root, texts, err := svgText(doc)
		require.NoError(t, err, file)
		assert.Equal(t, "svg", root, file)
		all := strings.Join(texts, "\n")
		for _, name := range names {
			assert.Contains(t, all, name, "%s: series or label %q", file, name)
		}
		assert.Contains(t, r.out, file, "the run lists the files it wrote")
	}
}

// TestQuickPrintsEverySection checks that a -quick run prints the header
// and every section.
func TestQuickPrintsEverySection(t *testing.T) {
	r := tinyRun()
	require.Equal(t, 0, r.code, "stderr: %s", r.errw)
	text := r.out
	for _, want := range []string{"cpu ", "logical cpus", "GOMAXPROCS", "go1.", "kernel", "time.Now costs"} {
		assert.Contains(t, text, want, "header")
	}
	for _, s := range sections {
		assert.Contains(t, text, "== "+s.title+" ==", "section %s", s.name)
	}
	for _, im := range peerImpls(&longSet{}) {
		assert.Contains(t, text, im.name, "implementation %s", im.name)
	}
	for _, im := range kernelImpls {
		assert.Contains(t, text, im.name, "kernel implementation %s", im.name)
	}
	assert.Contains(t, text, "1.274219991", "kernel result at N=100")
	assert.Contains(t, text, "surplus/exact")
	for _, im := range pauseImpls {
		assert.Contains(t, text, im.name, "pause implementation %s", im.name)
	}
	for _, ph := range pauseScript {
		assert.Contains(t, text, ph.name, "pause phase %s", ph.name)
	}
	for _, lv := range []string{"full (n=2)", "half (n=1)", "min (n=1)"} {
		assert.Contains(t, text, lv)
	}
	assert.Contains(t, text, "break-even")
	assert.Contains(t, text, "targets PASS")
}

// TestCompete runs a section with competing goroutines: the run completes,
// the header says so, and the goroutines are gone afterwards (goleak).
func TestCompete(t *testing.T) {
	var out, errw bytes.Buffer
	args := append(append([]string{}, tiny...), "-scenario", "surplus", "-compete", "2")
	require.Equal(t, 0, run(args, &out, &errw), "stderr: %s", errw.String())
	assert.Contains(t, out.String(), "competing    2 goroutines")
	assert.Contains(t, out.String(), "surplus/exact")
}

// TestScenarioSelectsSections checks that -scenario runs only what it names.
func TestScenarioSelectsSections(t *testing.T) {
	var out, errw bytes.Buffer
	args := append(append([]string{}, tiny...), "-scenario", "dispatch")
	require.Equal(t, 0, run(args, &out, &errw), "stderr: %s", errw.String())
	assert.Contains(t, out.String(), "== "+findSection("dispatch").title+" ==")
	for _, name := range []string{"peers", "grain", "targets"} {
		assert.NotContains(t, out.String(), "== "+findSection(name).title+" ==")
	}
}

// TestJSONIsValidAndComplete writes the JSON report and checks that it
// parses and holds every section with every row.
func TestJSONIsValidAndComplete(t *testing.T) {
	r := tinyRun()
	require.Equal(t, 0, r.code, "stderr: %s", r.errw)
	b := []byte(r.jsonb)
	require.True(t, json.Valid(b), "invalid JSON: %q", r.jsonb)

	var rep struct {
		SchemaVersion int                        `json:"schema_version"`
		Header        header                     `json:"header"`
		Config        config                     `json:"config"`
		Sections      map[string]json.RawMessage `json:"sections"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, schemaVersion, rep.SchemaVersion)
	assert.NotEmpty(t, rep.Header.CPU)
	assert.Positive(t, rep.Header.WorkersSpinNS)
	assert.NotEmpty(t, rep.Header.GoVersion)
	assert.NotEmpty(t, rep.Header.Kernel)
	assert.Positive(t, rep.Header.LogicalCPUs)
	assert.Positive(t, rep.Header.ClockNS)
	assert.Equal(t, 2, rep.Config.Max)
	assert.Equal(t, sectionNames(), rep.Config.Scenarios)
	for _, name := range sectionNames() {
		assert.Contains(t, rep.Sections, name)
	}

	var disp []dispatchSetup
	require.NoError(t, json.Unmarshal(rep.Sections["dispatch"], &disp))
	assert.Len(t, disp, 12, "3 levels x 2 modes x fresh and one set")
	for _, d := range disp {
		assert.Len(t, d.Iters, 1)
		assert.Positive(t, d.MedianAvgNS)
		assert.Positive(t, d.P99NS)
	}

	var peers peersResult
	require.NoError(t, json.Unmarshal(rep.Sections["peers"], &peers))
	require.Len(t, peers.Groups, 3)
	rows := peerImpls(&longSet{})
	for _, g := range peers.Groups {
		require.Len(t, g.Rows, len(rows), "level %s", g.Label)
		for i, r := range g.Rows {
			assert.Equal(t, rows[i].name, r.Impl)
			assert.Positive(t, r.MedianAvgNS, "%s %s", g.Label, r.Impl)
			assert.Positive(t, r.XWorkers, "%s %s", g.Label, r.Impl)
		}
	}

	var grain grainResult
	require.NoError(t, json.Unmarshal(rep.Sections["grain"], &grain))
	assert.Positive(t, grain.NSPerUnit)
	require.Len(t, grain.Sweeps, 1, "-max 2 sweeps n=2 only")
	sw := grain.Sweeps[0]
	assert.Len(t, sw.SerialNS, len(grainsShortNS))
	assert.Len(t, sw.Impls, len(grainImpls(&longSet{})), "every peers row but direct")
	for _, gi := range sw.Impls {
		assert.Len(t, gi.Speedup, len(grainsShortNS), gi.Impl)
		assert.Contains(t, []string{beInterpolated, beBelow, beNone}, gi.BreakEvenKind, gi.Impl)
	}

	var ts []target
	require.NoError(t, json.Unmarshal(rep.Sections["targets"], &ts))
	// The dispatch targets: ratio goals, allocations, two break-even goals;
	// the long-lived-set targets: 4 empty-task goals, 2 per surplus case (-max 2: one n per mode), 2
	// pause goals, 1 per kernel N and 1 per kernel N >= 64.
	want := len(ratioGoals) + 3 + 4 + 2*len(surplusCopyNS) + 2 + 2*len(kernelTiny) - 1
	require.Len(t, ts, want)
	for _, prefix := range []string{"full, fresh sets: workers / best peer", "full, one set: 1set:workers / pingpong",
		"surplus: workers n=1 5us", "surplus: workers+caller n=2 50us", "pause p50: serial / workgang",
		"kernel N=32: best workgang", "kernel N=100: forrange+caller / serial"} {
		assert.True(t, slices.ContainsFunc(ts, func(tg target) bool { return strings.HasPrefix(tg.Name, prefix) }), "no target %q", prefix)
	}
	for _, tg := range ts {
		assert.Contains(t, []string{statusPass, statusMiss, statusNA}, tg.Status, tg.Name)
		assert.NotEmpty(t, tg.Goal, tg.Name)
	}
}

// TestJSONUnitsAndNulls checks the report's conventions on the tiny run's
// JSON: durations only in ns (no key names another unit), and null, not 0,
// where a figure does not exist (the worker waits of a peer's row).
func TestJSONUnitsAndNulls(t *testing.T) {
	r := tinyRun()
	require.Equal(t, 0, r.code, "stderr: %s", r.errw)
	var doc any
	require.NoError(t, json.Unmarshal([]byte(r.jsonb), &doc))
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				for _, bad := range []string{"_us", "_ms", "_s", "_sec", "_seconds"} {
					assert.False(t, strings.HasSuffix(k, bad), "%s.%s: durations are in ns", path, k)
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("", doc)

	var rep struct {
		Sections struct {
			Peers struct {
				Groups []struct {
					Rows []map[string]json.RawMessage `json:"rows"`
				} `json:"groups"`
			} `json:"peers"`
		} `json:"sections"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.jsonb), &rep))
	require.NotEmpty(t, rep.Sections.Peers.Groups)
	for _, row := range rep.Sections.Peers.Groups[0].Rows {
		var impl string
		require.NoError(t, json.Unmarshal(row["impl"], &impl))
		waits, ok := row["worker_waits"]
		require.True(t, ok, "%s: worker_waits is always present", impl)
		if isWorkgang(impl) {
			assert.NotEqual(t, "null", string(waits), impl)
		} else {
			assert.Equal(t, "null", string(waits), impl)
		}
	}
}

// TestJSONNone checks that "none" is encoded as null: a target that was not
// measured, a break-even grain that does not exist, a missing max.
func TestJSONNone(t *testing.T) {
	b, err := json.Marshal(target{Name: "x", Status: statusNA})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ratio":null`)
	b, err = json.Marshal(target{Name: "x", Status: statusPass, Ratio: 0.5})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ratio":0.5`)
	b, err = json.Marshal(grainImpl{Impl: "x", BreakEvenKind: beNone})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"break_even_ns":null`)
	b, err = json.Marshal(grainImpl{Impl: "x", BreakEvenNS: 1500, BreakEvenKind: beInterpolated})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"break_even_ns":1500`)
	b, err = json.Marshal(iterStats{AvgNS: 1})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"max_ns":null`)
}

// TestImplsRunEveryCopy checks every implementation runs copies 0..n-1 once
// per run and stops its goroutines on close (goleak checks the latter).
func TestImplsRunEveryCopy(t *testing.T) {
	for _, im := range impls {
		for _, n := range []int{1, 2, 3} {
			counts := make([]atomic.Int64, n)
			r := im.start(2, n, func(i int) { counts[i].Add(1) })
			const runs = 50
			for range runs {
				r.run()
			}
			r.close()
			for i := range counts {
				assert.Equal(t, int64(runs), counts[i].Load(), "%s n=%d copy %d: got %d runs; want %d", im.name, n, i, counts[i].Load(), runs)
			}
		}
	}
}

// TestKernelAgreesWithSerial solves spectral-norm at N = 100 with every
// kernel implementation on one long-lived set and checks the benchmark's
// published answer (1.274219991) and that every result equals serial's
// exactly (each row is summed in the same order by every implementation).
func TestKernelAgreesWithSerial(t *testing.T) {
	ls := newLongSet(2)
	defer ls.close()
	for _, c := range []int{1, 2} {
		var ref float64
		for i, im := range kernelImpls {
			s := newSpectral(100)
			got := s.solve(im.par(ls, s, c))
			assert.Equal(t, "1.274219991", fmt.Sprintf("%.9f", got), "%s copies=%d", im.name, c)
			if i == 0 {
				ref = got
			}
			assert.Equal(t, ref, got, "%s copies=%d: got %v; want serial's %v", im.name, c, got, ref)
		}
	}
}

// TestPauseScript checks the script against the requirements: at
// least 10 phases, n from 1 to max, 0.5 to 100 us of work per phase, both
// modes; and that resolving it for a set keeps n within [1, size].
func TestPauseScript(t *testing.T) {
	assert.GreaterOrEqual(t, len(pauseScript), 10)
	ns, modes := map[int]bool{}, map[bool]bool{}
	for _, p := range pauseScript {
		assert.GreaterOrEqual(t, p.workNS, 500.0, p.name)
		assert.LessOrEqual(t, p.workNS, 100000.0, p.name)
		ns[p.n], modes[p.callerRuns] = true, true
	}
	assert.Len(t, ns, 3, "one, half and full parallelism")
	assert.Len(t, modes, 2, "caller-runs and plain phases")
	for _, size := range []int{1, 2, 5} {
		ps := resolvePhases(size, 1)
		for _, p := range ps {
			assert.True(t, p.N >= 1 && p.N <= size, "size %d phase %s: n=%d", size, p.Name, p.N)
		}
		work, ideal := idealSpeedup(ps, size)
		assert.InDelta(t, 322500, work, 1e-6)
		assert.True(t, ideal >= 1 && ideal <= float64(size), "size %d: ideal speedup %v", size, ideal)
		_, one := idealSpeedup(ps, 1)
		assert.Equal(t, 1.0, one, "size %d: one processor cannot beat serial", size)
	}
}

// TestKernelBlocks checks that the row blocks of c copies tile [0, n).
func TestKernelBlocks(t *testing.T) {
	for _, n := range []int{1, 7, 32, 100} {
		for c := 1; c <= min(n, 5); c++ {
			next := 0
			for i := range c {
				lo, hi := block(i, c, n)
				assert.Equal(t, next, lo, "n=%d c=%d copy %d", n, c, i)
				assert.GreaterOrEqual(t, hi-lo, n/c, "n=%d c=%d copy %d", n, c, i)
				next = hi
			}
			assert.Equal(t, n, next, "n=%d c=%d", n, c)
		}
	}
}

// TestSurplusNs checks that every surplus case leaves a created worker idle.
func TestSurplusNs(t *testing.T) {
	tests := []struct {
		size          int
		workers, call []int
	}{
		{1, nil, nil},
		{2, []int{1}, []int{2}},
		{4, []int{1, 2, 3}, []int{2, 4}},
		{8, []int{1, 4, 7}, []int{2, 4, 8}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.workers, surplusNs(tt.size, false), "size %d, workers", tt.size)
		assert.Equal(t, tt.call, surplusNs(tt.size, true), "size %d, caller-runs", tt.size)
	}
}

// TestBreakEven checks the break-even interpolation and its open-ended kinds.
func TestBreakEven(t *testing.T) {
	grains := []float64{1000, 2000, 4000, 8000}
	tests := []struct {
		name     string
		speedups []float64
		wantNS   float64
		wantKind string
	}{
		{"all above", []float64{1.1, 1.2, 1.5, 1.9}, 1000, beBelow},
		{"none", []float64{0.2, 0.4, 0.8, 0.9}, 0, beNone},
		{"last is 1", []float64{0.2, 0.4, 0.8, 1}, 0, beNone},
		{"crossing midway in log", []float64{0.5, 0.8, 1.2, 1.6}, 2828.4, beInterpolated},
		{"an early dip is pooled", []float64{1.2, 0.9, 1.1, 1.6}, 1000, beBelow},
		{"a late dip is pooled", []float64{0.5, 1.5, 0.9, 1.6}, 1640.6, beInterpolated},
		{"a late dip below 1 overall", []float64{0.5, 1.1, 0.6, 1.6}, 4594.8, beInterpolated},
	}
	for _, tt := range tests {
		gotNS, gotKind := breakEven(grains, tt.speedups)
		assert.Equal(t, tt.wantKind, gotKind, tt.name)
		assert.InDelta(t, tt.wantNS, gotNS, 1, "%s: got %v; want %v", tt.name, gotNS, tt.wantNS)
	}
}

// TestCompareBreakEven checks the break-even target's verdict in every case.
func TestCompareBreakEven(t *testing.T) {
	gi := func(ns float64, kind string) *grainImpl { return &grainImpl{BreakEvenNS: ns, BreakEvenKind: kind} }
	tests := []struct {
		name   string
		m, wg  *grainImpl
		status string
		ratio  float64
		bound  bool
	}{
		{"both crossings, pass", gi(1000, beInterpolated), gi(3000, beInterpolated), statusPass, 1.0 / 3, false},
		{"both crossings, miss", gi(2000, beInterpolated), gi(3000, beInterpolated), statusMiss, 2.0 / 3, false},
		{"workgang below the sweep", gi(500, beBelow), gi(2000, beInterpolated), statusPass, 0.25, true},
		{"bound decides nothing", gi(500, beBelow), gi(700, beInterpolated), statusNA, 500.0 / 700, true},
		{"both below", gi(500, beBelow), gi(500, beBelow), statusNA, 0, false},
		{"workgang never", gi(0, beNone), gi(2000, beInterpolated), statusMiss, 0, false},
		{"waitgroup never", gi(2000, beInterpolated), gi(0, beNone), statusPass, 0, false},
		{"neither", gi(0, beNone), gi(0, beNone), statusNA, 0, false},
	}
	for _, tt := range tests {
		tg := target{Limit: breakEvenLimit}
		compareBreakEven(&tg, tt.m, tt.wg)
		assert.Equal(t, tt.status, tg.Status, tt.name)
		assert.InDelta(t, tt.ratio, tg.Ratio, 1e-9, tt.name)
		assert.Equal(t, tt.bound, tg.UpperBound, tt.name)
	}
}

// TestRatioTarget checks both kinds of goal and the N/A case.
func TestRatioTarget(t *testing.T) {
	tests := []struct {
		name            string
		num, den, limit float64
		atLeast         bool
		status, goal    string
	}{
		{"under the limit", 1, 2, 0.7, false, statusPass, "<= 0.7"},
		{"over the limit", 3, 2, 1.1, false, statusMiss, "<= 1.1"},
		{"at least, reached", 340, 180, 1.7, true, statusPass, ">= 1.7"},
		{"at least, missed", 340, 300, 1.7, true, statusMiss, ">= 1.7"},
		{"nothing measured", 1, 0, 1, false, statusNA, "<= 1"},
	}
	for _, tt := range tests {
		tg := ratioTarget(tt.name, tt.num, tt.den, tt.limit, tt.atLeast, "")
		assert.Equal(t, tt.status, tg.Status, tt.name)
		assert.Equal(t, tt.goal, tg.Goal, tt.name)
	}
}

// TestEmptyTaskTargetsState checks the VM state line and the four goals.
func TestEmptyTaskTargetsState(t *testing.T) {
	mk := func(ping float64) *peersResult {
		rows := []peerRow{{Impl: nameWorkers}, {Impl: nameOneWorkers}, {Impl: nameWaitGroup}, {Impl: nameErrgroup}, {Impl: nameChanPool}, {Impl: namePingPong}}
		for i, ns := range []float64{900, 1200, 700, 800, 600, ping} {
			rows[i].MedianAvgNS = ns
		}
		return &peersResult{Groups: []peerGroup{{level: level{"full", 2}, Rows: rows}}}
	}
	var b bytes.Buffer
	ts := emptyTaskTargets(&b, mk(1100))
	assert.Contains(t, b.String(), "slow state")
	assert.Contains(t, b.String(), "best peer (chanpool) 600.0 ns")
	require.Len(t, ts, 4)
	assert.Equal(t, statusMiss, ts[0].Status, "900/600 > 1")
	assert.Equal(t, statusPass, ts[1].Status, "900/1100 <= 1.5")
	assert.Equal(t, statusMiss, ts[2].Status, "one set: 1200/600 > 1")
	assert.Equal(t, statusPass, ts[3].Status, "one set: 1200/1100 <= 1.5")
	b.Reset()
	emptyTaskTargets(&b, mk(300))
	assert.Contains(t, b.String(), "fast state")
}

// TestPercentileAndMedian checks the statistics helpers.
// TestIsotonic checks the monotone fit.
func TestIsotonic(t *testing.T) {
	tests := []struct{ in, want []float64 }{
		{nil, []float64{}},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}},
		{[]float64{3, 1}, []float64{2, 2}},
		{[]float64{1, 3, 2, 4}, []float64{1, 2.5, 2.5, 4}},
		{[]float64{4, 3, 2, 1}, []float64{2.5, 2.5, 2.5, 2.5}},
	}
	for _, tt := range tests {
		got := isotonic(tt.in)
		assert.InDeltaSlice(t, tt.want, got, 1e-12, "isotonic(%v) = %v; want %v", tt.in, got, tt.want)
	}
}

func TestPercentileAndMedian(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {90, 90}, {99, 99}, {100, 100}, {0, 1}} {
		assert.Equal(t, tt.want, percentile(d, tt.p), "p%v", tt.p)
	}
	assert.Zero(t, percentile(nil, 50))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Zero(t, median[float64](nil))
	assert.Equal(t, 3*time.Millisecond, median([]time.Duration{time.Millisecond, 5 * time.Millisecond, 3 * time.Millisecond}), "durations too (the mark section)")
	assert.Zero(t, ratio(1, 0))
}

// TestGrainRuns checks the grain sweep's run counts and copy counts.
func TestGrainRuns(t *testing.T) {
	assert.Equal(t, 10000, grainRuns(10000, 500), "capped at -runs")
	assert.Equal(t, 10, grainRuns(10000, 1e6), "about -runs microseconds of work")
	assert.Equal(t, minGrainRuns, grainRuns(20, 1e6), "at least minGrainRuns")
	assert.Equal(t, []int{2}, grainNs(1))
	assert.Equal(t, []int{2}, grainNs(2))
	assert.Equal(t, []int{2, 8}, grainNs(8))
}

// TestDescribeCPU checks the CPU line built from /proc/cpuinfo fields.
func TestDescribeCPU(t *testing.T) {
	got := describeCPU(map[string]string{
		"model name": "AMD EPYC", "cpu family": "26", "model": "2", "stepping": "1",
		"cpu MHz": "2096.000", "flags": "fpu sse hypervisor avx",
	})
	assert.Equal(t, "AMD EPYC (family 26 model 2 stepping 1), 2096 MHz, virtualized", got)
	assert.Equal(t, "unknown", describeCPU(map[string]string{}))
}

// TestIsTerminal checks that files and pipes are not terminals, so their
// progress lines are not rewritten with \r.
func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "progress")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, isTerminal(w), "a pipe")
	assert.False(t, isTerminal(&bytes.Buffer{}), "not a file")
	if runtime.GOOS == "linux" {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		require.NoError(t, err)
		defer null.Close()
		assert.False(t, isTerminal(null), "/dev/null is a character device, not a terminal")
	}
}

// TestProgress checks the progress line's delay, throttling and clearing.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	p.update("too early")
	assert.Empty(t, b.String(), "silent during the first seconds")
	p.delay = 0
	p.update("step %d", 1)
	assert.Contains(t, b.String(), "step 1")
	p.update("step %d", 2)
	assert.NotContains(t, b.String(), "step 2", "throttled")

	b.Reset()
	p = &progress{w: &b, tty: true, start: time.Now()}
	p.update("on a terminal")
	p.clear()
	assert.True(t, strings.HasPrefix(b.String(), "\r"), "rewrites its line")
	assert.True(t, strings.HasSuffix(b.String(), "\r"), "clears its line")
}
