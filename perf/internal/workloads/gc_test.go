package workloads

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// TestGCSectionQuick runs the gc section with the tiny flags (a -quick run
// with few runs) and checks the tables, the targets and the JSON result:
// every implementation on both heaps, with positive pauses in order p50 <=
// p99 <= max, and one verdict per target.
func TestGCSectionQuick(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gc.json")
	var out, errw bytes.Buffer
	args := append(append([]string{}, harness.TinyFlags...), "-scenario", "gc", "-json", path)
	require.Equal(t, 0, run(args, &out, &errw), "stderr: %s", errw.String())
	text := out.String()
	assert.Contains(t, text, "== "+GC.Title+" ==")
	for _, s := range []string{"small heap", "large heap", runners.NameWorkgang, runners.NameWaitGroup, runners.NameErrgroup, runners.NameChanPool, runners.NameSerial} {
		assert.Contains(t, text, s)
	}
	assert.Zero(t, strings.Count(text, "PASS")+strings.Count(text, "MISS"), "no verdicts without -targets")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep struct {
		Sections struct {
			GC GCResult `json:"gc"`
		} `json:"sections"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	res := rep.Sections.GC
	assert.Equal(t, 2, res.Workers)
	require.Len(t, res.Heaps, 2)
	for _, hp := range res.Heaps {
		assert.Equal(t, tinyGCCycles, hp.Cycles, hp.Name)
		assert.Positive(t, hp.LiveAvg, hp.Name)
		require.Len(t, hp.Rows, 2+len(runners.Peers), hp.Name)
		for _, r := range hp.Rows {
			assert.Positive(t, r.P50NS, "%s %s", hp.Name, r.Impl)
			assert.LessOrEqual(t, r.P50NS, r.P99NS, "%s %s", hp.Name, r.Impl)
			assert.LessOrEqual(t, r.P99NS, r.MaxNS, "%s %s", hp.Name, r.Impl)
			assert.Positive(t, r.VsSerial)
		}
	}
}

// TestGCHeapsSizes: the default run measures more cycles than -quick, and
// -quick more than the tiny runs of the tests.
func TestGCHeapsSizes(t *testing.T) {
	long := gcHeaps(harness.Config{Runs: harness.DefaultRuns, Long: true})
	def := gcHeaps(harness.Config{Runs: harness.DefaultRuns})
	quick := gcHeaps(harness.Config{Runs: harness.QuickRuns, Quick: true})
	tinyH := gcHeaps(harness.Config{Runs: 20, Quick: true})
	for i := range def {
		assert.Greater(t, def[i].cycles, quick[i].cycles)
		assert.Greater(t, quick[i].cycles, tinyH[i].cycles)
	}
	assert.Less(t, def[0].slots, def[1].slots, "small heap first")
	assert.Greater(t, long[1].slots, def[1].slots, "-long: a larger large heap")
	assert.Greater(t, long[0].cycles, def[0].cycles, "-long: more small-heap cycles")
	assert.Equal(t, longMarkObjects, newMarkConfig(harness.Config{Runs: harness.DefaultRuns, Long: true}).Objects)
}

// TestGCTargets checks the verdicts on made-up rows.
func TestGCTargets(t *testing.T) {
	rows := func(serial, wg, waitgroup, eg float64) []GCRow {
		return []GCRow{{Impl: runners.NameSerial, P50NS: serial}, {Impl: runners.NameWorkgang, P50NS: wg}, {Impl: runners.NameWaitGroup, P50NS: waitgroup}, {Impl: runners.NameErrgroup, P50NS: eg}, {Impl: runners.NameChanPool, P50NS: 2 * eg}}
	}
	ts := gcTargets(GCHeap{Name: "large", Rows: rows(1000, 500, 499, 520)})
	require.Len(t, ts, 1+len(runners.Peers))
	assert.Equal(t, harness.StatusPass, ts[0].Status) // 2.0 >= 1.6
	assert.Equal(t, harness.StatusPass, ts[1].Status) // 500/499 <= 1.02
	assert.Equal(t, harness.StatusPass, ts[2].Status)
	assert.Equal(t, harness.StatusPass, ts[3].Status)
	ts = gcTargets(GCHeap{Name: "large", Rows: rows(700, 500, 400, 520)})
	assert.Equal(t, harness.StatusMiss, ts[0].Status) // 1.4
	assert.Equal(t, harness.StatusMiss, ts[1].Status) // 1.25
	ts = gcTargets(GCHeap{Name: "small", Rows: rows(10, 20, 40, 25)})
	require.Len(t, ts, 1)
	assert.Equal(t, harness.StatusMiss, ts[0].Status) // 20/25 = 0.8
	assert.InDelta(t, 0.8, ts[0].Ratio, 1e-9)
	ts = gcTargets(GCHeap{Name: "small", Rows: rows(10, 15, 40, 25)})
	assert.Equal(t, harness.StatusPass, ts[0].Status) // 0.6
}
