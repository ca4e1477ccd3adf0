package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCommandLine checks that the header names the command a reader can run
// again: go run ./perf with the flags given, quoted where a shell needs it.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "go run ./perf"},
		{[]string{"-quick"}, "go run ./perf -quick"},
		{[]string{"-scenario", "dispatch,grain", "-json", "/tmp/out.json", "-max=4"},
			"go run ./perf -scenario dispatch,grain -json /tmp/out.json -max=4"},
		{[]string{"-svg", "my plots"}, "go run ./perf -svg 'my plots'"},
		{[]string{"-svg", "it's"}, `go run ./perf -svg 'it'\''s'`},
		{[]string{"-svg", ""}, "go run ./perf -svg ''"},
		{[]string{"-svg", "$HOME/*"}, "go run ./perf -svg '$HOME/*'"},
	} {
		assert.Equal(t, tc.want, commandLine(tc.args), "%q", tc.args)
	}
}
