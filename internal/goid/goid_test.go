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
	var deep func(int) uintptr
	deep = func(n int) uintptr {
		var pad [256]byte
		if n == 0 {
			return Get() + uintptr(pad[0])
		}
		return deep(n - 1)
	}
	assert.Equal(t, a, deep(200))
}

func TestDistinctGoroutinesDistinctTokens(t *testing.T) {
	const n = 64
	tokens := make([]uintptr, n)
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
	seen := map[uintptr]int{Get(): -1}
	for i, tok := range tokens {
		require.NotZero(t, tok, "goroutine %d: token changed or zero", i)
		prev, dup := seen[tok]
		require.False(t, dup, "goroutines %d and %d share token %#x", prev, i, tok)
		seen[tok] = i
	}
}

func BenchmarkGet(b *testing.B) {
	b.ReportAllocs()
	var sink uintptr
	for b.Loop() {
		sink += Get()
	}
	_ = sink
}
