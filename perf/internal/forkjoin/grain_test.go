package forkjoin

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBreakEven checks the break-even interpolation and its open-ended kinds.
func TestBreakEven(t *testing.T) {
	grains := []float64{1000, 2000, 4000, 8000}
	tests := []struct {
		name     string
		speedups []float64
		wantNS   float64
		wantKind string
	}{
		{"all above", []float64{1.1, 1.2, 1.5, 1.9}, 1000, beBelow},
		{"none", []float64{0.2, 0.4, 0.8, 0.9}, 0, beNone},
		{"last is 1", []float64{0.2, 0.4, 0.8, 1}, 0, beNone},
		{"crossing midway in log", []float64{0.5, 0.8, 1.2, 1.6}, 2828.4, beInterpolated},
		{"an early dip is pooled", []float64{1.2, 0.9, 1.1, 1.6}, 1000, beBelow},
		{"a late dip is pooled", []float64{0.5, 1.5, 0.9, 1.6}, 1640.6, beInterpolated},
		{"a late dip below 1 overall", []float64{0.5, 1.1, 0.6, 1.6}, 4594.8, beInterpolated},
	}
	for _, tt := range tests {
		gotNS, gotKind := breakEven(grains, tt.speedups)
		assert.Equal(t, tt.wantKind, gotKind, tt.name)
		assert.InDelta(t, tt.wantNS, gotNS, 1, "%s: got %v; want %v", tt.name, gotNS, tt.wantNS)
	}
}

// TestIsotonic checks the monotone fit.
func TestIsotonic(t *testing.T) {
	tests := []struct{ in, want []float64 }{
		{nil, []float64{}},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}},
		{[]float64{3, 1}, []float64{2, 2}},
		{[]float64{1, 3, 2, 4}, []float64{1, 2.5, 2.5, 4}},
		{[]float64{4, 3, 2, 1}, []float64{2.5, 2.5, 2.5, 2.5}},
	}
	for _, tt := range tests {
		got := isotonic(tt.in)
		assert.InDeltaSlice(t, tt.want, got, 1e-12, "isotonic(%v) = %v; want %v", tt.in, got, tt.want)
	}
}

// TestGrainRuns checks the grain sweep's run counts and copy counts.
func TestGrainRuns(t *testing.T) {
	assert.Equal(t, 10000, grainRuns(10000, 500), "capped at -runs")
	assert.Equal(t, 10, grainRuns(10000, 1e6), "about -runs microseconds of work")
	assert.Equal(t, minGrainRuns, grainRuns(20, 1e6), "at least minGrainRuns")
	assert.Equal(t, []int{2}, grainNs(1))
	assert.Equal(t, []int{2}, grainNs(2))
	assert.Equal(t, []int{2, 8}, grainNs(8))
}
