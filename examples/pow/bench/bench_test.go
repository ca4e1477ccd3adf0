package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMeasure(t *testing.T) {
	rows, err := Measure(Options{Difficulty: 4, Copies: 2, Calls: 20, FirstCalls: 3, Seed: 5})
	require.NoError(t, err)
	var names []string
	for _, r := range rows {
		names = append(names, r.Solver)
		assert.Equal(t, 20, r.Later.N, r.Solver)
		assert.Equal(t, 3, r.First.N, r.Solver)
		assert.Equal(t, 3, r.FirstPre.N, r.Solver)
		assert.Equal(t, 3, r.First0.N, r.Solver)
		assert.Equal(t, 3, r.FirstPre0.N, r.Solver)
		assert.Positive(t, r.Later.P50, r.Solver)
	}
	assert.Equal(t, []string{"serial", "go+wg", "errgroup", "RunContext", "RunContext+flag", "RunN+flag"}, names)
	var out bytes.Buffer
	PrintRows(&out, rows)
	assert.Equal(t, 1+6, strings.Count(out.String(), "\n"))
	assert.Contains(t, out.String(), "1.00x")
	_, err = Measure(Options{Copies: 0, Calls: 1, FirstCalls: 1})
	assert.ErrorContains(t, err, "pow: bad options")
}

func TestOneHash(t *testing.T) {
	ts, err := OneHash(2, 300)
	require.NoError(t, err)
	require.Len(t, ts, 9)
	for _, tl := range ts {
		assert.Equal(t, 300, tl.Lat.N, tl.Solver)
		assert.Equal(t, tl.Slow, tl.SlowGC+tl.SlowWakeup+tl.SlowMutex+tl.SlowFault+tl.SlowPreempted+tl.SlowNone, tl.Solver)
		assert.GreaterOrEqual(t, tl.Slow, 3, "at least 1%% of the calls are at or above the p99")
		assert.LessOrEqual(t, tl.Lat.P99, tl.Lat.Max)
	}
	assert.Zero(t, ts[0].AllocsPerCall, "the serial search allocates nothing")
	assert.Positive(t, ts[3].AllocsPerCall, "RunContext allocates its context")
	assert.Zero(t, ts[7].AllocsPerCall, "an empty caller-runs RunN allocates nothing")
	assert.Equal(t, "ref: WithCancelCause+cancel", ts[8].Solver)
	var out bytes.Buffer
	PrintTails(&out, ts)
	assert.Equal(t, 1+9, strings.Count(out.String(), "\n"))
}

func TestNewCost(t *testing.T) {
	a, b := NewCost(2, 5)
	assert.Positive(t, a)
	assert.Positive(t, b)
}
