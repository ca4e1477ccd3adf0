package forkjoin

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSurplusNs checks that every surplus case leaves a created worker idle.
func TestSurplusNs(t *testing.T) {
	tests := []struct {
		size          int
		workers, call []int
	}{
		{1, nil, nil},
		{2, []int{1}, []int{2}},
		{4, []int{1, 2, 3}, []int{2, 4}},
		{8, []int{1, 4, 7}, []int{2, 4, 8}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.workers, surplusNs(tt.size, false), "size %d, workers", tt.size)
		assert.Equal(t, tt.call, surplusNs(tt.size, true), "size %d, caller-runs", tt.size)
	}
}
