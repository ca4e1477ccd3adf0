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
	"go.uber.org/goleak"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
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
	r.code = run(append(append([]string{}, harness.TinyFlags...), "-scenario", "all,examples", "-targets", "-json", jsonPath, "-svg", svgDir), &out, &errw)
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
	for _, s := range sections {
		if s.Verdict != nil {
			body := text[strings.Index(text, "== "+s.Title+" =="):]
			body = body[:strings.Index(body, "("+s.Name+": ")]
			assert.Regexp(t, `(?m)^verdict( withheld)?:`, body, "section %s states a verdict or why not", s.Name)
		}
	}
	assert.Regexp(t, `\d+ targets: \d+ PASS, \d+ MISS, \d+ N/A`, text)
	assert.Contains(t, text, "why: ", "every target group states its reason")
}

// TestScenarioSelectsSections checks that -scenario runs only what it names.
func TestScenarioSelectsSections(t *testing.T) {
	var out, errw bytes.Buffer
	args := append(append([]string{}, harness.TinyFlags...), "-scenario", "dispatch")
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

	var ts []harness.Target
	require.NoError(t, json.Unmarshal(rep.Sections["targets"], &ts))
	// The openmp section's targets: one per row of its mixed-process mode.
	var om struct {
		Mixed struct {
			Rows []json.RawMessage `json:"rows"`
		} `json:"mixed"`
	}
	require.NoError(t, json.Unmarshal(rep.Sections["openmp"], &om))
	require.NotEmpty(t, om.Mixed.Rows, "openmp mixed rows")
	openmpTargets := 0
	for _, tg := range ts {
		if strings.HasPrefix(tg.Name, "openmp mixed/alone: ") {
			openmpTargets++
		}
	}
	assert.Equal(t, len(om.Mixed.Rows), openmpTargets, "one openmp target per mixed row")
	// Every section with goals contributed (the sections' own tests count
	// theirs).
	for _, prefix := range []string{"full: workgang / best peer", "full: 1set:workgang / pingpong", "n=2 break-even: ",
		"surplus: workgang n=1 5us", "surplus: workgang+caller n=2 50us", "pause p50: serial / workgang",
		"kernel N=32: best workgang", "kernel N=100: workgang ForRange / serial", "gc large: workgang / chanpool", "gc small",
		"openmp mixed/alone: PARALLEL RunN caller-runs", "openmp mixed/alone: schedule(dynamic,1) ForRange caller-runs",
		"httpd c=1: ", "shared ~", "pow first call", "ports "} {
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
