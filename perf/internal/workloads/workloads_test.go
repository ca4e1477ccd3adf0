package workloads

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// run runs this package's sections and their targets as the perf command
// does.
func run(args []string, stdout, stderr io.Writer) int {
	c := harness.Command{Sections: []harness.Section{Mark, GC, HTTPD, Shared, Pow, Ports, harness.TargetsSection("gc")}}
	return c.Run(args, stdout, stderr)
}

// TestTargetsOfEverySection runs gc and the examples with -targets and
// counts each section's targets in the JSON report.
func TestTargetsOfEverySection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	var out, errw bytes.Buffer
	args := append(append([]string{}, harness.TinyFlags...), "-scenario", "gc,examples", "-targets", "-json", path)
	require.Equal(t, 0, run(args, &out, &errw), "stderr: %s", errw.String())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep struct {
		Sections struct {
			HTTPD   httpdResult      `json:"httpd"`
			Shared  sharedResult     `json:"shared"`
			Pow     powResult        `json:"pow"`
			Ports   portsResult      `json:"ports"`
			Targets []harness.Target `json:"targets"`
		} `json:"sections"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	s := rep.Sections
	require.NotEmpty(t, s.HTTPD.Targets, "httpd targets")
	require.NotEmpty(t, s.Shared.Targets, "shared targets")
	require.NotEmpty(t, s.Pow.Targets, "pow targets")
	require.Len(t, s.Ports.Targets, 2*2+1, "ports: 2 sizes x 2 callers, the allocations")
	// gc: serial and every peer on the large heap, the best peer on the
	// small one; then the examples' own, in table order.
	gc := 1 + len(runners.Peers) + 1
	require.Len(t, s.Targets, gc+len(s.HTTPD.Targets)+len(s.Shared.Targets)+len(s.Pow.Targets)+len(s.Ports.Targets))
	assert.Equal(t, s.Ports.Targets, s.Targets[len(s.Targets)-len(s.Ports.Targets):])
}
