package forkjoin

import (
	"encoding/json"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// run runs this package's sections and their targets as the perf command
// does.
func run(args []string, stdout, stderr io.Writer) int { return command.Run(args, stdout, stderr) }

var command = harness.Command{Sections: []harness.Section{Dispatch, Peers, Grain, Surplus, Pause, Kernel,
	harness.TargetsSection("peers", "grain", "surplus", "pause", "kernel")}}

// tinyRun is one run of every section of this package with the tiny flags,
// -targets and -json, shared by the tests that read its output. It returns
// the exit code, stdout, stderr and the JSON file's contents.
var tinyRun = sync.OnceValue(func() harness.Captured {
	return command.Capture(append(append([]string{}, harness.TinyFlags...), "-targets"))
})

// TestQuickPrintsEveryRow checks that the tiny run prints every
// implementation, level, phase and figure the sections promise.
func TestQuickPrintsEveryRow(t *testing.T) {
	r := tinyRun()
	require.Equal(t, 0, r.Code, "stderr: %s", r.Errw)
	text := r.Out
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
	assert.Contains(t, text, "break-even")
	assert.Regexp(t, `machine: handing a run to another processor and back \(pingpong\) took \d+ ns`, text)
}

// TestJSONRows checks every section's rows in the JSON report, and counts
// the sections' targets.
func TestJSONRows(t *testing.T) {
	r := tinyRun()
	require.Equal(t, 0, r.Code, "stderr: %s", r.Errw)
	var rep struct {
		Sections map[string]json.RawMessage `json:"sections"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.JSONB), &rep))
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

	var grain GrainResult
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
	// goals, 2 per surplus case (-max 2: one n per mode), 3 pause goals, 1
	// per kernel N and 1 per kernel N >= 64.
	want := len(ratioGoals) + 3 + 4 + 2*len(surplusCopyNS) + 3 + 2*len(kernelTiny) - 1
	require.Len(t, ts, want)
}

// TestJSONNone checks that "none" is encoded as null: a break-even grain
// that does not exist.
func TestJSONNone(t *testing.T) {
	b, err := json.Marshal(GrainImpl{Impl: "x", BreakEvenKind: beNone})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"break_even_ns":null`)
	b, err = json.Marshal(GrainImpl{Impl: "x", BreakEvenNS: 1500, BreakEvenKind: beInterpolated})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"break_even_ns":1500`)
}
