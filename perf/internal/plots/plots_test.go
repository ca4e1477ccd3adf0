package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/forkjoin"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/workloads"
)

// TestGrainAndGC draws a made-up grain sweep and gc result and checks the
// files: named per n and per heap, each with its series, its axis and the
// caption, and the gc figure's title with the note of a withheld verdict.
func TestGrainAndGC(t *testing.T) {
	dir := t.TempDir()
	g := &forkjoin.GrainResult{Sweeps: []forkjoin.GrainSweep{{N: 2, GrainsNS: []float64{1000, 10000}, Impls: []forkjoin.GrainImpl{
		{Impl: runners.NameCaller, Speedup: []float64{0.8, 1.7}},
		{Impl: runners.NameWaitGroup, Speedup: []float64{0.4, 1.5}},
		{Impl: runners.NamePingPong, Speedup: []float64{1.2, 1.9}},
	}}}}
	name, err := Grain(g, dir, "the caption", "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "grain-n2.svg"), name)
	svg := read(t, name)
	for _, want := range []string{runners.NameCaller, runners.NameWaitGroup, "bound: pingpong", "serial (speedup 1)", "the caption"} {
		assert.Contains(t, svg, want)
	}
	gc := workloads.GCResult{Workers: 2, Heaps: []workloads.GCHeap{{Name: "small", Slots: 1024, Cycles: 3, Rows: []workloads.GCRow{
		{Impl: runners.NameSerial, P50NS: 3000, P99NS: 4000}, {Impl: runners.NameWorkgang, P50NS: 2000, P99NS: 5000},
	}}}}
	name, err = GC(gc, dir, "the caption", "(verdict withheld: other programs used 40% of the CPUs)")
	require.NoError(t, err)
	svg = read(t, name)
	for _, want := range []string{"gc, small heap", runners.NameSerial, runners.NameWorkgang, "p50", "p99", "pause (µs)",
		"(verdict withheld: other programs used 40% of the CPUs)"} {
		assert.Contains(t, svg, want)
	}
	assert.NotContains(t, read(t, filepath.Join(dir, "grain-n2.svg")), "withheld", "no note, no withheld")
}

// TestNothingToPlot checks that a missing or empty result draws nothing.
func TestNothingToPlot(t *testing.T) {
	dir := t.TempDir()
	for name, plot := range map[string]func(any, string, string, string) (string, error){"grain": Grain, "pause": Pause, "kernel": Kernel, "mark": Mark, "gc": GC} {
		got, err := plot(nil, dir, "", "")
		assert.NoError(t, err, name)
		assert.Empty(t, got, name)
	}
	got, err := Kernel(&forkjoin.KernelResult{}, dir, "", "")
	assert.NoError(t, err)
	assert.Empty(t, got, "a kernel result without sizes")
	files, _ := os.ReadDir(dir)
	assert.Empty(t, files)
}

// read returns the file's contents.
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(strings.TrimSpace(string(b)), "<?xml") || strings.Contains(string(b), "<svg"), "%s is not SVG", path)
	return string(b)
}
