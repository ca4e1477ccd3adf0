package fleet

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBurnSplits(t *testing.T) {
	whole := Burn(7, 0, 1000)
	assert.Equal(t, whole, Burn(7, 0, 333)+Burn(7, 333, 600)+Burn(7, 933, 67))
	assert.NotEqual(t, whole, Burn(8, 0, 1000))
	assert.Zero(t, Burn(7, 5, 0))
}

// expected computes an instance's checksum directly: its jobs unsplit.
func expected(cfg Config, id int) uint64 {
	var sum uint64
	for j := range cfg.Jobs {
		sum += Burn(uint64(id)<<32|uint64(j), 0, cfg.Units)
	}
	return sum
}

func TestEveryVariantComputesTheSums(t *testing.T) {
	for _, parts := range []int{1, 3} {
		for _, units := range []int{1, 2, 100, 1001} {
			for _, v := range Variants() {
				cfg := Config{Instances: 40, Jobs: 3, Units: units, Parts: parts, Wait: 50 * time.Microsecond, Variant: v}
				r, err := Run(cfg)
				require.NoError(t, err)
				for i, s := range r.Sums {
					require.Equal(t, expected(cfg, i), s, "%s parts=%d units=%d instance %d", v, parts, units, i)
				}
				assert.GreaterOrEqual(t, r.PeakGoroutines, 1, v)
				assert.Greater(t, r.Wall, time.Duration(0))
			}
		}
	}
}

func TestCompare(t *testing.T) {
	rs, err := Compare(Config{Instances: 64, Jobs: 2, Units: 500, Parts: 2, Wait: time.Millisecond, Nominal: time.Microsecond}, []Variant{Shared, GoWG}, 3)
	require.NoError(t, err)
	require.Len(t, rs, 3)
	assert.Equal(t, []Variant{Serial, Shared, GoWG}, []Variant{rs[0].Variant, rs[1].Variant, rs[2].Variant})
	var out bytes.Buffer
	PrintTable(&out, rs)
	assert.Equal(t, 4, strings.Count(out.String(), "\n"), out.String())
	assert.Contains(t, out.String(), "~1µs")
	assert.Contains(t, out.String(), "1.00x")
	_, err = Compare(Config{}, nil, 0)
	assert.EqualError(t, err, "fleet: runs = 0, want at least 1")
}

func TestFirstDiff(t *testing.T) {
	assert.Equal(t, -1, firstDiff([]uint64{1, 2}, []uint64{1, 2}))
	assert.Equal(t, 1, firstDiff([]uint64{1, 3}, []uint64{1, 2}))
}

func TestUsage(t *testing.T) {
	r, err := Run(Config{Instances: 200, Jobs: 2, Units: 20000, Parts: 2, Wait: time.Millisecond, Variant: Own})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, r.PeakGoroutines, 200, "the instances were alive at once")
	assert.Greater(t, r.User+r.Sys, time.Duration(0), "CPU time measured")
	assert.Greater(t, r.PeakRSS, int64(1<<20), "peak RSS read")
	assert.Greater(t, r.NVCSw+r.NIVCSw, int64(0))
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Instances: 0, Jobs: 1, Units: 1, Parts: 1, Variant: Serial}, "fleet: instances 0, jobs 1, units 1: each must be at least 1"},
		{Config{Instances: 1, Jobs: 1, Units: 1, Parts: 0, Variant: Serial}, "fleet: parts 0 out of range"},
		{Config{Instances: 1, Jobs: 1, Units: 1, Parts: 1, Wait: -1, Variant: Serial}, "fleet: wait -1ns must not be negative"},
		{Config{Instances: 1, Jobs: 1, Units: 1, Parts: 1, Variant: "x"}, `fleet: unknown variant "x"`},
	} {
		_, err := Run(tc.cfg)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
}

func TestCalibrate(t *testing.T) {
	assert.GreaterOrEqual(t, Calibrate(time.Nanosecond), 1)
	assert.Greater(t, Calibrate(100*time.Microsecond), Calibrate(time.Microsecond))
}
