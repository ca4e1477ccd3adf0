package spin

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunnableField(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0.12 0.34 0.56 3/412 9876\n", 3, true},
		{"4.84 1.77 0.65 12/141 9693\n", 12, true},
		{"0.12 0.34 0.56", 0, false},
		{"", 0, false},
	} {
		got, ok := runnableField([]byte(tc.in))
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
	}
}

func TestCountCPUList(t *testing.T) {
	for in, want := range map[string]int{"0-1\n": 2, "0\n": 1, "0-3,8,10-11\n": 7, "": 0} {
		assert.Equal(t, want, countCPUList([]byte(in)), in)
	}
}

func TestMachineReadings(t *testing.T) {
	assert.Positive(t, allowedCPUs(), "the affinity mask of this thread")
	assert.Positive(t, onlineCPUs())
}
