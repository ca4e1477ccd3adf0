package ranges_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks/ranges"
)

// Regression tests: range arithmetic near MaxInt must not overflow.

func TestChunkSizeNoOverflow(t *testing.T) {
	for _, tc := range []struct {
		n, workers, want int
	}{
		{math.MaxInt, 4, math.MaxInt/32 + 1}, // was 1: n + per - 1 wrapped
		{math.MaxInt, 1, math.MaxInt/8 + 1},
		{100, math.MaxInt/8 + 1, 1}, // was a division by zero: workers * 8 wrapped to 0
		{100, math.MaxInt, 1},
		{math.MaxInt, math.MaxInt, 1},
		{math.MaxInt / 8, math.MaxInt / 8, 1},
		{0, math.MaxInt, 1},
	} {
		if got := ranges.ChunkSize(tc.n, tc.workers); got != tc.want {
			t.Errorf("ChunkSize(%d, %d) = %d; want %d", tc.n, tc.workers, got, tc.want)
		}
	}
}

func TestNumChunksNoOverflow(t *testing.T) {
	for _, tc := range []struct {
		n, chunk, want int
	}{
		{math.MaxInt, 2, math.MaxInt/2 + 1}, // was negative
		{math.MaxInt, math.MaxInt, 1},
		{math.MaxInt, math.MaxInt - 1, 2},
		{math.MaxInt, 1, math.MaxInt},
		{10, math.MaxInt, 1},
		{math.MaxInt/2 + 1, math.MaxInt/4 + 1, 2},
	} {
		if got := newLoop(tc.n, tc.chunk).NumChunks(); got != tc.want {
			t.Errorf("Reset(%d, %d).NumChunks() = %d; want %d", tc.n, tc.chunk, got, tc.want)
		}
	}
}

// A huge chunk hands out its one chunk once, however often Next is called
// after that.
func TestLoopHugeChunkDrainsOnce(t *testing.T) {
	l := newLoop(10, math.MaxInt)
	lo, hi, ok := l.Next()
	require.Equal(t, []any{0, 10, true}, []any{lo, hi, ok})
	for i := range 1000 {
		if lo, hi, ok := l.Next(); ok {
			t.Fatalf("call %d after draining returned [%d, %d)", i, lo, hi)
		}
	}
	assert.Equal(t, 10, l.Claimed())
}

// A small chunk on a loop near MaxInt: many failing claims after draining
// must not wrap next back into [0, n).
func TestLoopNearMaxIntDrainsOnce(t *testing.T) {
	n := math.MaxInt
	l := newLoop(n, math.MaxInt/2+1)
	l.Reset(n, n-5) // two chunks: [0, n-5), [n-5, n)
	assert.Equal(t, [][2]int{{0, n - 5}, {n - 5, n}}, chunks(l))
	for range 1000 {
		_, _, ok := l.Next()
		require.False(t, ok)
	}
}

// Copies draining a loop with chunk MaxInt/2+1 (2^62 where int has 64 bits)
// got [0, 10) three times and chunks with negative bounds; now exactly once.
func TestTaskHugeChunkThreeCopies(t *testing.T) {
	var mu sync.Mutex
	var got [][2]int
	task := ranges.NewTask("huge", 10, math.MaxInt/2+1, func(_, lo, hi int) {
		mu.Lock()
		got = append(got, [2]int{lo, hi})
		mu.Unlock()
	})
	for range 20 {
		got = nil
		testutil.RunCopies(3, task.Work)
		require.Equal(t, [][2]int{{0, 10}}, got)
		task.Loop().Reset(10, math.MaxInt/2+1)
	}
}

// edges are lengths and chunks where arithmetic used to overflow: small
// values, int's range halved and its top, and, where int has 64 bits, the
// values around 2^31 and 2^32, where a 32-bit intermediate would wrap (they
// do not exist where int has 32 bits: there the halves and the top are the
// same boundaries).
var edges = func() []int {
	e := []int{0, 1, 2, 3, 7}
	for _, v := range []int64{1 << 31, 1<<31 + 1, 1 << 32} {
		if v <= math.MaxInt {
			e = append(e, int(v))
		}
	}
	return append(e, math.MaxInt/2, math.MaxInt/2+1, math.MaxInt/2+2, math.MaxInt-1, math.MaxInt)
}()

// maxDrain bounds the chunks a test drains from one loop.
const maxDrain = 1 << 12

// checkCover drains l with copies goroutines and checks the chunks tile
// [0, n) exactly once, in bounds; loops with more than maxDrain chunks are
// checked on their first maxDrain chunks (their tails are covered by the
// cases with few, huge chunks).
func checkCover(t *testing.T, n, chunk, copies int) {
	t.Helper()
	l := newLoop(n, chunk)
	want := l.NumChunks()
	c := chunk
	if c == 0 {
		c = ranges.ChunkSize(n, 1)
	}
	if n > 0 && want != (n-1)/c+1 {
		t.Fatalf("Reset(%d, %d).NumChunks() = %d; want %d", n, chunk, want, (n-1)/c+1)
	}
	if want > maxDrain {
		// Too many to drain: check the first chunks' bounds (the tail of
		// such loops is covered by the cases with few, huge chunks).
		for i := range maxDrain {
			lo, hi, ok := l.Next()
			if !ok || lo != i*c || hi != lo+c {
				t.Fatalf("Reset(%d, %d): chunk %d = [%d, %d) %v; want [%d, %d)", n, chunk, i, lo, hi, ok, i*c, i*c+c)
			}
		}
		return
	}
	got := drain(l.Next, copies)
	if len(got) != want {
		t.Fatalf("Reset(%d, %d) on %d copies: %d chunks; want %d: %v", n, chunk, copies, len(got), want, got)
	}
	if err := tiles(got, n); err != nil {
		t.Fatalf("Reset(%d, %d) on %d copies: %v", n, chunk, copies, err)
	}
	if l.Claimed() != n {
		t.Fatalf("Reset(%d, %d): Claimed() = %d; want %d", n, chunk, l.Claimed(), n)
	}
}

func TestLoopEdgeTable(t *testing.T) {
	for _, n := range edges {
		for _, chunk := range edges {
			t.Run(fmt.Sprintf("n=%d/chunk=%d", n, chunk), func(t *testing.T) {
				checkCover(t, n, chunk, 3)
			})
		}
	}
}

func TestLoopRandomized(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() int {
		switch r.IntN(3) {
		case 0:
			return r.IntN(100)
		case 1:
			return edges[r.IntN(len(edges))] - r.IntN(3)
		default:
			return r.IntN(math.MaxInt)
		}
	}
	for range 300 {
		n, chunk := max(0, pick()), max(0, pick())
		checkCover(t, n, chunk, 1+r.IntN(4))
	}
}

func FuzzLoop(f *testing.F) {
	f.Add(int64(10), int64(math.MaxInt64), uint8(3))
	f.Add(int64(10), int64(1<<62), uint8(3))
	f.Add(int64(math.MaxInt64), int64(2), uint8(2))
	f.Fuzz(func(t *testing.T, n, chunk int64, copies uint8) {
		if n < 0 || chunk < 0 || int64(int(n)) != n || int64(int(chunk)) != chunk {
			t.Skip()
		}
		checkCover(t, int(n), int(chunk), 1+int(copies%8))
	})
}

// drain claims chunks with next from copies goroutines until it fails, plus a
// few claims after that (which must fail too), and returns every chunk
// claimed, sorted by lo.
func drain(next func() (lo, hi int, ok bool), copies int) [][2]int {
	var mu sync.Mutex
	var got [][2]int
	var wg sync.WaitGroup
	for range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine [][2]int
			for {
				lo, hi, ok := next()
				if !ok {
					break
				}
				mine = append(mine, [2]int{lo, hi})
			}
			for range 3 { // drained: further claims fail
				if lo, hi, ok := next(); ok {
					mine = append(mine, [2]int{lo, hi})
				}
			}
			mu.Lock()
			got = append(got, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.SortFunc(got, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	return got
}

// tiles reports whether sorted chunks cover [0, n) exactly once, in bounds.
func tiles(got [][2]int, n int) error {
	next := 0
	for _, ch := range got {
		if ch[0] != next || ch[1] <= ch[0] || ch[1] > n {
			return fmt.Errorf("chunk [%d, %d) after %d; chunks %v", ch[0], ch[1], next, got)
		}
		next = ch[1]
	}
	if next != n {
		return fmt.Errorf("chunks end at %d; want %d", next, n)
	}
	return nil
}
