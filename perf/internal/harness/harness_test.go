package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echo is a section that prints one line and returns it as its result, with
// a verdict and a plot that writes a file named after the result.
var echo = Section{
	Name: "echo", Title: "echo: a section of the harness's tests",
	Run: func(h *Harness) (any, error) {
		h.Status("echo")
		h.ClearStatus()
		fmt.Fprintln(h.Out, "echo ran")
		return "echoed", nil
	},
	Verdict: func(*Harness, any) []string { return []string{"echo is as fast as echo"} },
	Plot: func(res any, dir, caption, note string) (string, error) {
		path := filepath.Join(dir, res.(string)+".txt")
		return path, os.WriteFile(path, []byte(caption+"\n"+note), 0o644)
	},
}

// TestCommandRunsTheTable runs a table of one section with -json and -svg:
// the header, the section's title, output and verdict (or why it was
// withheld), the plot's file with the header's caption, and the report.
func TestCommandRunsTheTable(t *testing.T) {
	dir := t.TempDir()
	jsonPath, svgDir := filepath.Join(dir, "r.json"), filepath.Join(dir, "svg")
	var out, errw bytes.Buffer
	args := append(append([]string{}, TinyFlags...), "-json", jsonPath, "-svg", svgDir)
	require.Equal(t, 0, Command{Sections: []Section{echo}}.Run(args, &out, &errw), "stderr: %s", errw.String())
	text := out.String()
	for _, want := range []string{"workgang perf", "time.Now costs", "== echo: a section of the harness's tests ==", "echo ran", "(echo: ", "load average at the end"} {
		assert.Contains(t, text, want)
	}
	assert.Regexp(t, `(?m)^(verdict:\n  echo is as fast as echo|verdict withheld: other programs used)`, text)
	caption, err := os.ReadFile(filepath.Join(svgDir, "echoed.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(caption), "GOMAXPROCS")
	assert.Contains(t, text, "wrote "+filepath.Join(svgDir, "echoed.txt"))
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, SchemaVersion, rep.SchemaVersion)
	assert.Equal(t, "echoed", rep.Sections["echo"])
	assert.Equal(t, []string{"echo"}, rep.Config.Scenarios)
}

// TestPlotTitleSaysWithheld judges the echo section as if other programs
// had used every CPU and then as if none had: the first time the verdict is
// withheld and the plot's title says so, the second time neither.
func TestPlotTitleSaysWithheld(t *testing.T) {
	for _, loaded := range []bool{true, false} {
		dir := t.TempDir()
		var out bytes.Buffer
		h := &Harness{Out: &out, Results: map[string]any{"echo": "echoed"}, sections: table{echo}, withheld: map[string]string{}}
		others := 0.0
		if loaded {
			others = float64(runtime.NumCPU())
		}
		h.judge(&echo, "echoed", others, true)
		require.NoError(t, h.writePlots(dir))
		b, err := os.ReadFile(filepath.Join(dir, "echoed.txt"))
		require.NoError(t, err)
		if loaded {
			assert.Contains(t, out.String(), "verdict withheld: other programs used")
			assert.Contains(t, string(b), "(verdict withheld: other programs used 100% of the CPUs)")
		} else {
			assert.Contains(t, out.String(), "verdict:\n  echo is as fast as echo")
			assert.NotContains(t, string(b), "withheld")
		}
	}
}

// TestCommandExitCodes checks the exit codes: a bad flag, -h, and a section
// that fails.
func TestCommandExitCodes(t *testing.T) {
	fail := Section{Name: "fail", Title: "fail", Run: func(*Harness) (any, error) { return nil, errors.New("broken") }}
	c := Command{Sections: []Section{echo, fail}}
	var out, errw bytes.Buffer
	assert.Equal(t, 2, c.Run([]string{"-max", "0"}, &out, &errw), "bad flag")
	assert.Contains(t, errw.String(), "perf: -max 0")
	assert.Equal(t, 0, c.Run([]string{"-h"}, &out, &errw), "help")
	errw.Reset()
	assert.Equal(t, 1, c.Run(append(append([]string{}, TinyFlags...), "-scenario", "fail"), &out, &errw), "a failing section")
	assert.Contains(t, errw.String(), "perf: section fail: broken")
}

// TestCompete runs a section with competing goroutines: the run completes,
// the header says so, and the goroutines are gone afterwards (goleak).
func TestCompete(t *testing.T) {
	var out, errw bytes.Buffer
	args := append(append([]string{}, TinyFlags...), "-compete", "2")
	require.Equal(t, 0, Command{Sections: []Section{echo}}.Run(args, &out, &errw), "stderr: %s", errw.String())
	assert.Contains(t, out.String(), "competing    2 goroutines")
	assert.True(t, strings.Contains(out.String(), "echo ran"))
}
