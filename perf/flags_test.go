package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseFlags checks defaults, -quick, and section selection.
func TestParseFlags(t *testing.T) {
	all := defaultSections()
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
		{"targets pull their needs", []string{"-scenario", "targets"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: []string{"peers", "grain", "surplus", "pause", "kernel", "gc", "targets"}}},
		{"-targets adds the check to all", []string{"-targets"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: append(defaultSections(), "targets"), Targets: true}},
		{"examples", []string{"-scenario", "examples"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: exampleSections}},
		{"-targets adds the check to a selection", []string{"-targets", "-scenario", "dispatch"}, config{Max: 3, Iters: defaultIters, Runs: defaultRuns, Scenarios: []string{"dispatch", "peers", "grain", "surplus", "pause", "kernel", "gc", "targets"}, Targets: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-max", "3"}, tt.args...) // the default depends on the machine
			got, err := parseFlags(args, &bytes.Buffer{})
			require.NoError(t, err)
			assert.Equal(t, args, got.args, "the flags as given, for the header")
			got.args = nil
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
