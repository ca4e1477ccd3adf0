package harness

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testTable is a table of the shape of the perf command's: sections that
// -scenario all runs, opt-in examples, an opt-in section that is neither,
// and the targets section with its needs.
var testTable = table{
	{Name: "dispatch"}, {Name: "peers"}, {Name: "grain"}, {Name: "pause"},
	{Name: "httpd", OptIn: true, Example: true}, {Name: "pow", OptIn: true, Example: true},
	{Name: "contended", OptIn: true},
	TargetsSection("peers", "grain", "pause"),
}

// TestParseFlags checks defaults, -quick, and section selection.
func TestParseFlags(t *testing.T) {
	all := []string{"dispatch", "peers", "grain", "pause"}
	tests := []struct {
		name string
		args []string
		want Config
	}{
		{"defaults", nil, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: all}},
		{"quick", []string{"-quick"}, Config{Max: 3, Iters: QuickIters, Runs: QuickRuns, Scenarios: all, Quick: true}},
		{"quick keeps explicit sizes", []string{"-quick", "-runs", "7", "-iters", "2"}, Config{Max: 3, Iters: 2, Runs: 7, Scenarios: all, Quick: true}},
		{"max and json", []string{"-max", "8", "-json", "out.json"}, Config{Max: 8, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: all, JSON: "out.json"}},
		{"pin", []string{"-pin"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: all, Pin: true}},
		{"one section", []string{"-scenario", "peers"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: []string{"peers"}}},
		{"table order and spaces", []string{"-scenario", "grain, dispatch"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: []string{"dispatch", "grain"}}},
		{"long", []string{"-long"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: all, Long: true}},
		{"targets pull their needs", []string{"-scenario", "targets"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: []string{"peers", "grain", "pause", "targets"}}},
		{"-targets adds the check to all", []string{"-targets"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: append(all, "targets"), Targets: true}},
		{"examples", []string{"-scenario", "examples"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: []string{"httpd", "pow"}}},
		{"-targets adds the check to a selection", []string{"-targets", "-scenario", "dispatch"}, Config{Max: 3, Iters: DefaultIters, Runs: DefaultRuns, Scenarios: []string{"dispatch", "peers", "grain", "pause", "targets"}, Targets: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-max", "3"}, tt.args...) // the default depends on the machine
			got, err := parseFlags(args, &bytes.Buffer{}, testTable)
			require.NoError(t, err)
			assert.Equal(t, args, got.args, "the flags as given, for the header")
			got.args = nil
			assert.Equal(t, tt.want, got, "got %+v; want %+v", got, tt.want)
		})
	}
}

// TestParseFlagsDefaultMax checks that -max defaults to a usable value.
func TestParseFlagsDefaultMax(t *testing.T) {
	got, err := parseFlags(nil, &bytes.Buffer{}, testTable)
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
		_, err := parseFlags(tt.args, &bytes.Buffer{}, testTable)
		if assert.Error(t, err, "args %q", tt.args) {
			assert.Contains(t, err.Error(), tt.want, "args %q", tt.args)
		}
	}
}

// TestOptInSections checks that only naming an opt-in section selects it:
// not all, -quick, examples or -targets; and that the usage lists the
// sections and the examples.
func TestOptInSections(t *testing.T) {
	for _, args := range [][]string{nil, {"-quick"}, {"-scenario", "examples"}, {"-targets"}} {
		c, err := parseFlags(args, &bytes.Buffer{}, testTable)
		require.NoError(t, err)
		assert.NotContains(t, c.Scenarios, "contended", "args %q", args)
	}
	c, err := parseFlags([]string{"-scenario", "contended"}, &bytes.Buffer{}, testTable)
	require.NoError(t, err)
	assert.Equal(t, []string{"contended"}, c.Scenarios)
	var usage bytes.Buffer
	_, err = parseFlags([]string{"-h"}, &usage, testTable)
	assert.Equal(t, errHelp, err)
	assert.Contains(t, usage.String(), "dispatch, peers, grain, pause, httpd, pow, contended, targets")
	assert.Contains(t, usage.String(), "examples (httpd, pow: the examples' own measurements")
}
