package forkjoin

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/runners"
)

// TestWaitShares checks that every share is a share of its own total: with
// caller-runs, workers see far more runs than they get copies of (here 1133
// sightings while spinning for 40 worker copies), and the shares must still
// be at most 100% and split the sightings exactly.
func TestWaitShares(t *testing.T) {
	w := runners.WaitStats{WorkerCopies: 40, Ready: 10, Spun: 1133, Parked: 57}
	s := sharesOf(w, 1000, 1000)
	assert.InDelta(t, 0.04, s.Workers, 1e-9, "40 of 1000 copies")
	for name, x := range map[string]float64{"ready": s.Ready, "spun": s.Spun, "woken": s.Woken} {
		assert.GreaterOrEqual(t, x, 0.0, name)
		assert.LessOrEqual(t, x, 1.0, "%s: got %v; want a share of at most 1", name, x)
	}
	assert.InDelta(t, 1, s.Ready+s.Spun+s.Woken, 1e-9, "the sightings' shares sum to 1")
	assert.InDelta(t, 1133.0/1200, s.Spun, 1e-9)
	assert.Equal(t, uint64(1200), s.Seen)
	assert.InDelta(t, 1.2, s.PerRun, 1e-9, "1200 sightings in 1000 runs")
	assert.Equal(t, waitShares{}, sharesOf(runners.WaitStats{}, 0, 0), "nothing measured: zero shares, no NaN")
}

// TestDispatchSharesAtMostAll runs the dispatch section and checks that no
// share it prints exceeds 100%, in every mode (caller-runs rows are where
// workers see runs whose copies the caller took).
func TestDispatchSharesAtMostAll(t *testing.T) {
	var out, errw bytes.Buffer
	args := append(append([]string{}, harness.TinyFlags...), "-scenario", "dispatch")
	require.Equal(t, 0, run(args, &out, &errw), "stderr: %s", errw.String())
	lines := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.Contains(line, "timed batches:") {
			continue
		}
		lines++
		for _, m := range regexp.MustCompile(`(\d+)%`).FindAllStringSubmatch(line, -1) {
			pct, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			assert.LessOrEqual(t, pct, 100, "share above 100%% in %q", line)
		}
	}
	assert.Equal(t, 8, lines, "one line per workgang setup")
}
