package harness

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

// TestDescribeCPU checks the CPU line built from /proc/cpuinfo fields.
func TestDescribeCPU(t *testing.T) {
	got := describeCPU(map[string]string{
		"model name": "AMD EPYC", "cpu family": "26", "model": "2", "stepping": "1",
		"cpu MHz": "2096.000", "flags": "fpu sse hypervisor avx",
	})
	assert.Equal(t, "AMD EPYC (family 26 model 2 stepping 1), 2096 MHz, virtualized", got)
	assert.Equal(t, "unknown", describeCPU(map[string]string{}))
}
