package goid

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSameGoroutineSameToken(t *testing.T) {
	a := Get()
	require.NotZero(t, a)
	assert.Equal(t, a, Get())
	// Deep recursion may grow and move the stack; the token must not change.
	var deep func(int) uint64
	deep = func(n int) uint64 {
		var pad [256]byte
		if n == 0 {
			return Get() + uint64(pad[0])
		}
		return deep(n - 1)
	}
	assert.Equal(t, a, deep(200))
}

func TestDistinctGoroutinesDistinctTokens(t *testing.T) {
	const n = 64
	tokens := make([]uint64, n)
	var start, done sync.WaitGroup
	start.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			tokens[i] = Get()
			start.Done()
			start.Wait() // all alive at once, so no token can be recycled
			if Get() != tokens[i] {
				tokens[i] = 0
			}
		}()
	}
	done.Wait()
	seen := map[uint64]int{Get(): -1}
	for i, tok := range tokens {
		require.NotZero(t, tok, "goroutine %d: token changed or zero", i)
		prev, dup := seen[tok]
		require.False(t, dup, "goroutines %d and %d share token %#x", prev, i, tok)
		seen[tok] = i
	}
}

// Goroutine numbers past 2^32 parse whole where uintptr has 32 bits: the
// parse once wrapped there, so the goroutine numbered 2^32 panicked with a
// "cannot parse" message and 2^32+1 got goroutine 1's token.
func TestParseIDPast32Bits(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   uint64
	}{
		{"goroutine 1 [running]:\n", 1},
		{"goroutine 2147483653 [running]:\n", 1<<31 + 5},
		{"goroutine 4294967296 [running]:\n", 1 << 32},
		{"goroutine 4294967297 [running]:\n", 1<<32 + 1},
		{"goroutine 9223372036854775807 [running]:\n", 1<<63 - 1},
	} {
		if got := parseID([]byte(tc.header)); got != tc.want {
			t.Errorf("parseID(%q) = %d; want %d", tc.header, got, tc.want)
		}
	}
	for _, bad := range []string{"", "goroutine", "goroutine 0 [running]:", "goroutine x", "thread 7 [running]:"} {
		assert.PanicsWithValue(t, "goid: cannot parse goroutine header "+bad, func() { parseID([]byte(bad)) })
	}
}

func BenchmarkGet(b *testing.B) {
	b.ReportAllocs()
	var sink uint64
	for b.Loop() {
		sink += Get()
	}
	_ = sink
}
