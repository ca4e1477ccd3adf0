package policy

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDefaultFor(t *testing.T) {
	for _, tc := range []struct{ ncpu, want int }{
		{-1, 1}, {0, 1}, {1, 1}, {2, 2}, {8, 8},
		{9, 8}, // 8 + 1*5/8 = 8
		{16, 13},
		{24, 18},
		{64, 43},
		{128, 83},
	} {
		if got := defaultFor(tc.ncpu); got != tc.want {
			t.Errorf("defaultFor(%d) = %d; want %d", tc.ncpu, got, tc.want)
		}
	}
	assert.Equal(t, defaultFor(runtime.GOMAXPROCS(0)), Default())
}

func TestActiveGrowsAtOnceShrinksByHalves(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Active
		work []int
		want []int
	}{
		{
			name: "grow at once",
			p:    Active{WorkPerWorker: 100, Max: 16},
			work: []int{50, 300, 1600, 5000},
			want: []int{1, 3, 16, 16},
		},
		{
			name: "shrink by halves",
			p:    Active{WorkPerWorker: 100, Max: 16},
			work: []int{1600, 0, 0, 0, 0, 0},
			want: []int{16, 8, 4, 2, 1, 1},
		},
		{
			name: "shrink toward the need, not below",
			p:    Active{WorkPerWorker: 10, Max: 16},
			work: []int{160, 50, 50, 50, 50},
			want: []int{16, 10, 7, 6, 5},
		},
		{
			name: "grow again mid-shrink",
			p:    Active{WorkPerWorker: 1, Max: 8},
			work: []int{8, 1, 6, 1},
			want: []int{8, 4, 6, 3},
		},
		{
			name: "ceil of the need",
			p:    Active{WorkPerWorker: 100, Max: 8},
			work: []int{101, 99, 0},
			want: []int{2, 1, 1},
		},
		{
			name: "zero WorkPerWorker means 1",
			p:    Active{Max: 4},
			work: []int{3, 9},
			want: []int{3, 4},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			var got []int
			for _, w := range tc.work {
				got = append(got, p.Next(w))
			}
			assert.Equal(t, tc.want, got, "work %v", tc.work)
			assert.Equal(t, tc.want[len(tc.want)-1], p.last)
		})
	}
}

func TestActiveZeroValue(t *testing.T) {
	var p Active
	assert.Equal(t, 0, p.last)
	assert.Equal(t, 1, p.Next(0))
	assert.Equal(t, Default(), p.Next(1<<30), "capped by the default maximum")
	assert.PanicsWithValue(t, "policy: Active.Next: negative work -1", func() { p.Next(-1) })
}
