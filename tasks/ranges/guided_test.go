package ranges_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/workgang/workgang/tasks/ranges"
)

func TestGuidedSequentialChunks(t *testing.T) {
	for _, tc := range []struct {
		name                string
		n, minChunk, copies int
		want                [][2]int
	}{
		{"empty", 0, 1, 2, nil},
		{"min 1, 2 copies", 100, 1, 2, [][2]int{{0, 25}, {25, 43}, {43, 57}, {57, 67}, {67, 75}, {75, 81},
			{81, 85}, {85, 88}, {88, 91}, {91, 93}, {93, 94}, {94, 95}, {95, 96}, {96, 97}, {97, 98}, {98, 99}, {99, 100}}},
		{"min 8, 2 copies", 100, 8, 2, [][2]int{{0, 25}, {25, 43}, {43, 57}, {57, 67}, {67, 75}, {75, 83}, {83, 91}, {91, 99}, {99, 100}}},
		{"min above n", 10, 64, 4, [][2]int{{0, 10}}},
		{"one copy halves", 8, 1, 1, [][2]int{{0, 4}, {4, 6}, {6, 7}, {7, 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuided(tc.n, tc.minChunk, tc.copies)
			got := chunks(g)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.n, g.Claimed())
			assert.LessOrEqual(t, len(got), g.NumChunks())
			_, _, ok := g.Next()
			assert.False(t, ok)
		})
	}
}

func TestGuidedZeroValueAndPanics(t *testing.T) {
	var g ranges.Loop
	_, _, ok := g.Next()
	assert.False(t, ok)
	assert.Equal(t, 0, g.NumChunks())
	assert.Equal(t, 0, g.Claimed())
	assert.PanicsWithValue(t, "ranges: Loop.ResetGuided: negative length -1", func() { newGuided(-1, 1, 1) })
	assert.PanicsWithValue(t, "ranges: Loop.ResetGuided: minChunk = 0, want >= 1", func() { newGuided(1, 0, 1) })
	assert.PanicsWithValue(t, "ranges: Loop.ResetGuided: copies = 0, want >= 1", func() { newGuided(1, 1, 0) })
}

// checkGuided drains a guided loop from several goroutines and checks that
// its chunks tile [0, n) exactly once and that each has the size the
// schedule gives for the iterations left at its start, whatever the
// interleaving: min(max(minChunk, (n-lo)/(2*copies)), n-lo).
func checkGuided(t *testing.T, n, minChunk, copies, goroutines int) {
	t.Helper()
	g := newGuided(n, minChunk, copies)
	div := uint64(2) * uint64(copies)
	// The chunk sequence does not depend on the interleaving: simulate it to
	// see whether it is short enough to drain.
	count := 0
	for cur := uint64(0); cur < uint64(n) && count <= maxDrain; count++ {
		rem := uint64(n) - cur
		cur += min(max(uint64(minChunk), rem/div), rem)
	}
	if count > maxDrain {
		// Many chunks (minChunk small against n/(2*copies)): check the
		// first ones' bounds on one goroutine.
		next := 0
		for range maxDrain {
			lo, hi, ok := g.Next()
			rem := uint64(n - next)
			if want := min(max(uint64(minChunk), rem/div), rem); !ok || lo != next || uint64(hi-lo) != want {
				t.Fatalf("ResetGuided(%d, %d, %d): chunk [%d, %d) %v; want [%d, %d)", n, minChunk, copies, lo, hi, ok, next, uint64(next)+want)
			}
			next = hi
		}
		return
	}
	got := drain(g.Next, goroutines)
	if err := tiles(got, n); err != nil {
		t.Fatalf("ResetGuided(%d, %d, %d) on %d goroutines: %v", n, minChunk, copies, goroutines, err)
	}
	for _, ch := range got {
		rem := uint64(n - ch[0])
		want := min(max(uint64(minChunk), rem/div), rem)
		if uint64(ch[1]-ch[0]) != want {
			t.Fatalf("ResetGuided(%d, %d, %d): chunk [%d, %d) has %d iterations; want %d", n, minChunk, copies, ch[0], ch[1], ch[1]-ch[0], want)
		}
	}
	if len(got) > g.NumChunks() {
		t.Fatalf("ResetGuided(%d, %d, %d): %d chunks; NumChunks() = %d", n, minChunk, copies, len(got), g.NumChunks())
	}
	if g.Claimed() != n {
		t.Fatalf("ResetGuided(%d, %d, %d): Claimed() = %d; want %d", n, minChunk, copies, g.Claimed(), n)
	}
}

// Edges of n, minChunk and copies, where sums and 2*copies could overflow.
func TestGuidedEdgeTable(t *testing.T) {
	for _, n := range edges {
		for _, minChunk := range edges[1:] {
			for _, copies := range []int{1, 3, math.MaxInt} {
				t.Run(fmt.Sprintf("n=%d/min=%d/copies=%d", n, minChunk, copies), func(t *testing.T) {
					checkGuided(t, n, minChunk, copies, 3)
				})
			}
		}
	}
}

func TestGuidedRandomized(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		n := r.IntN(100000)
		if r.IntN(4) == 0 {
			n = math.MaxInt - r.IntN(3)
		}
		checkGuided(t, n, 1+r.IntN(1000), 1+r.IntN(16), 1+r.IntN(4))
	}
}

func FuzzGuided(f *testing.F) {
	f.Add(int64(100), int64(1), uint8(2))
	f.Add(int64(math.MaxInt64), int64(1), uint8(7))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), uint8(0))
	f.Fuzz(func(t *testing.T, n, minChunk int64, copies uint8) {
		if n < 0 || minChunk < 1 || int64(int(n)) != n || int64(int(minChunk)) != minChunk {
			t.Skip()
		}
		checkGuided(t, int(n), int(minChunk), 1+int(copies), 1+int(copies%4))
	})
}
