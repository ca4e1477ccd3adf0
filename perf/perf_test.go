package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
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

// findSection returns the table entry called name, or nil.
func findSection(name string) *harness.Section {
	for i := range sections {
		if sections[i].Name == name {
			return &sections[i]
		}
	}
	return nil
}

// tiny are flags that run every section with the smallest sizes, so that
// the harness tests take a fraction of a second even under -race. They set
// no timing expectations.
var tiny = []string{"-quick", "-runs", "20", "-iters", "1", "-max", "2"}

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

// byHandSections are left out of tinyRun: contended starts processes and
// takes a minute or more at any size (contended_test.go tests its parts).
var byHandSections = []string{"contended"}

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
	r.code = run(append(append([]string{}, tiny...), "-scenario", "all,examples", "-targets", "-json", jsonPath, "-svg", svgDir), &out, &errw)
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
		if slices.Contains(byHandSections, s.Name) {
			continue
		}
		assert.Contains(t, text, "== "+s.Title+" ==", "section %s", s.Name)
	}
	for _, im := range peerImpls(&runners.LongSet{}) {
		assert.Contains(t, text, im.Name, "implementation %s", im.Name)
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
	for _, lv := range []string{"full (n=2)", "min (n=1)"} {
		assert.Contains(t, text, lv)
	}
	assert.Contains(t, text, "half (n=1): same n as min", "at -max 2 half is min: printed, measured once")
	for _, s := range sections {
		if s.Verdict != nil {
			body := text[strings.Index(text, "== "+s.Title+" =="):]
			body = body[:strings.Index(body, "("+s.Name+": ")]
			assert.Regexp(t, `(?m)^verdict( withheld)?:`, body, "section %s states a verdict or why not", s.Name)
		}
	}
	assert.Contains(t, text, "break-even")
	assert.Regexp(t, `\d+ targets: \d+ PASS, \d+ MISS, \d+ N/A`, text)
	assert.Contains(t, text, "why: ", "every target group states its reason")
	assert.Regexp(t, `machine: handing a run to another processor and back \(pingpong\) took \d+ ns`, text)
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
	assert.Contains(t, out.String(), "== "+findSection("dispatch").Title+" ==")
	for _, name := range []string{"peers", "grain", "targets"} {
		assert.NotContains(t, out.String(), "== "+findSection(name).Title+" ==")
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
		Header        harness.Header             `json:"header"`
		Config        harness.Config             `json:"config"`
		Sections      map[string]json.RawMessage `json:"sections"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, harness.SchemaVersion, rep.SchemaVersion)
	assert.NotEmpty(t, rep.Header.CPU)
	assert.Positive(t, rep.Header.WorkersSpinNS)
	assert.NotEmpty(t, rep.Header.GoVersion)
	assert.NotEmpty(t, rep.Header.Kernel)
	assert.Positive(t, rep.Header.LogicalCPUs)
	assert.Positive(t, rep.Header.ClockNS)
	assert.Equal(t, 2, rep.Config.Max)
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
	}
	tested := slices.DeleteFunc(names, func(n string) bool { return slices.Contains(byHandSections, n) })
	assert.Equal(t, tested, rep.Config.Scenarios, "every section but those run by hand, with -targets")
	for _, name := range tested {
		assert.Contains(t, rep.Sections, name)
	}

	var disp []dispatchSetup
	require.NoError(t, json.Unmarshal(rep.Sections["dispatch"], &disp))
	assert.Len(t, disp, 8, "2 levels (half is min at -max 2) x 2 modes x fresh and one set")
	for _, d := range disp {
		assert.Len(t, d.Iters, 1)
		assert.Positive(t, d.MedianAvgNS)
		assert.Positive(t, d.P99NS)
	}

	var pr peersResult
	require.NoError(t, json.Unmarshal(rep.Sections["peers"], &pr))
	require.Len(t, pr.Groups, 2, "full and min")
	rows := peerImpls(&runners.LongSet{})
	for _, g := range pr.Groups {
		require.Len(t, g.Rows, len(rows), "level %s", g.Label)
		for i, r := range g.Rows {
			assert.Equal(t, rows[i].Name, r.Impl)
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
	assert.Len(t, sw.Impls, len(grainImpls(&runners.LongSet{})), "every peers row but serial")
	for _, gi := range sw.Impls {
		assert.Len(t, gi.Speedup, len(grainsShortNS), gi.Impl)
		assert.Contains(t, []string{beInterpolated, beBelow, beNone}, gi.BreakEvenKind, gi.Impl)
	}

	var ts []harness.Target
	require.NoError(t, json.Unmarshal(rep.Sections["targets"], &ts))
	// The ratio goals, allocations, two break-even goals, 4 full-level
	// goals, 2 per surplus case (-max 2: one n per mode), 2 pause goals, 1
	// per kernel N and 1 per kernel N >= 64, and the gc section's: serial and
	// every peer on the large heap, the best peer on the small one.
	want := len(ratioGoals) + 3 + 4 + 2*len(surplusCopyNS) + 2 + 2*len(kernelTiny) - 1 + 1 + len(runners.Peers) + 1
	// The example sections' own targets count too (the run selects them).
	var hr httpdResult
	var sr sharedResult
	var pw powResult
	var pt portsResult
	require.NoError(t, json.Unmarshal(rep.Sections["httpd"], &hr))
	require.NoError(t, json.Unmarshal(rep.Sections["shared"], &sr))
	require.NoError(t, json.Unmarshal(rep.Sections["pow"], &pw))
	require.NoError(t, json.Unmarshal(rep.Sections["ports"], &pt))
	require.NotEmpty(t, hr.Targets, "httpd targets")
	require.NotEmpty(t, sr.Targets, "shared targets")
	require.NotEmpty(t, pw.Targets, "pow targets")
	require.Len(t, pt.Targets, 2*2+1, "ports: 2 sizes x 2 callers, the allocations")
	want += len(hr.Targets) + len(sr.Targets) + len(pw.Targets) + len(pt.Targets)
	// And the openmp section's: one per row of its mixed-process mode.
	var om struct {
		Mixed struct {
			Rows []json.RawMessage `json:"rows"`
		} `json:"mixed"`
	}
	require.NoError(t, json.Unmarshal(rep.Sections["openmp"], &om))
	require.NotEmpty(t, om.Mixed.Rows, "openmp mixed rows")
	want += len(om.Mixed.Rows)
	require.Len(t, ts, want)
	for _, prefix := range []string{"full: workgang / best peer", "full: 1set:workgang / pingpong",
		"surplus: workgang n=1 5us", "surplus: workgang+caller n=2 50us", "pause p50: serial / workgang",
		"kernel N=32: best workgang", "kernel N=100: workgang ForRange / serial", "gc large: workgang / chanpool", "gc small",
		"openmp mixed/alone: PARALLEL RunN caller-runs", "openmp mixed/alone: schedule(dynamic,1) ForRange caller-runs"} {
		assert.True(t, slices.ContainsFunc(ts, func(tg harness.Target) bool { return strings.HasPrefix(tg.Name, prefix) }), "no target %q", prefix)
	}
	for _, tg := range ts {
		assert.Contains(t, []string{harness.StatusPass, harness.StatusMiss, harness.StatusNA}, tg.Status, tg.Name)
		assert.NotEmpty(t, tg.Goal, tg.Name)
		assert.NotEmpty(t, tg.Reason, tg.Name)
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
		if runners.IsWorkgang(impl) {
			assert.NotEqual(t, "null", string(waits), impl)
		} else {
			assert.Equal(t, "null", string(waits), impl)
		}
	}
}

// TestJSONNone checks that "none" is encoded as null: a break-even grain
// that does not exist.
func TestJSONNone(t *testing.T) {
	b, err := json.Marshal(grainImpl{Impl: "x", BreakEvenKind: beNone})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"break_even_ns":null`)
	b, err = json.Marshal(grainImpl{Impl: "x", BreakEvenNS: 1500, BreakEvenKind: beInterpolated})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"break_even_ns":1500`)
}
