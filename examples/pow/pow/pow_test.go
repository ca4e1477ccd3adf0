package pow

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// zeroBits counts leading zero bits bit by bit, independently of ZeroBits.
func zeroBits(p Puzzle, nonce uint64) int {
	in := append(p.Data[:0:0], p.Data[:]...)
	in = binary.LittleEndian.AppendUint64(in, nonce)
	h := sha256.Sum256(in)
	n := 0
	for _, b := range h {
		for i := 7; i >= 0; i-- {
			if b>>i&1 != 0 {
				return n
			}
			n++
		}
	}
	return n
}

func TestZeroBits(t *testing.T) {
	p := NewPuzzle(3, 0)
	for n := range uint64(3000) {
		require.Equal(t, zeroBits(p, n), p.ZeroBits(n), "nonce %d", n)
	}
	assert.Equal(t, NewPuzzle(3, 0), p, "deterministic")
	assert.NotEqual(t, NewPuzzle(4, 0).Data, p.Data)
	assert.PanicsWithValue(t, "pow: difficulty 41 out of range [0, 40]", func() { NewPuzzle(1, 41) })
	assert.PanicsWithValue(t, "pow: difficulty -1 out of range [0, 40]", func() { NewPuzzle(1, -1) })
}

func solvers(t *testing.T, copies int) []Solver {
	w := workers.New("pow-test", copies)
	shared, release := workers.Acquire("pow-test-shared", copies)
	t.Cleanup(func() { w.Close(); release() })
	return []Solver{Serial{}, GoWG{copies}, ErrGroup{copies}, Context{"ctx", w, copies}, Context{"ctx-shared", shared, copies},
		ContextFlag{"ctx-flag", w, copies}, Flag{"flag", w, copies}}
}

func TestSolversFindValidNonces(t *testing.T) {
	for _, copies := range []int{1, 2, 3} {
		for _, s := range solvers(t, copies) {
			for d := 0; d <= 12; d += 3 {
				for seed := range uint64(4) {
					p := NewPuzzle(seed, d)
					n, err := s.Solve(context.Background(), p)
					require.NoError(t, err)
					assert.GreaterOrEqual(t, zeroBits(p, n), d, "%s copies=%d d=%d seed=%d nonce=%d", s.Name(), copies, d, seed, n)
				}
			}
		}
	}
}

func TestSerialFindsTheSmallest(t *testing.T) {
	p := NewPuzzle(9, 8)
	n, err := Serial{}.Solve(context.Background(), p)
	require.NoError(t, err)
	for m := range n {
		require.Less(t, zeroBits(p, m), 8, "nonce %d < %d solves it", m, n)
	}
	assert.GreaterOrEqual(t, zeroBits(p, n), 8)
}

// TestCancelStops: the solvers that take a context stop within a moment of
// its cancellation on a search that would take hours.
func TestCancelStops(t *testing.T) {
	p := NewPuzzle(1, MaxDifficulty)
	for _, s := range solvers(t, 2) {
		switch s.(type) {
		case GoWG, Flag, ContextFlag:
			continue // flag-stopped: they do not look at the context
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		start := time.Now()
		_, err := s.Solve(ctx, p)
		cancel()
		assert.ErrorIs(t, err, context.DeadlineExceeded, s.Name())
		assert.Less(t, time.Since(start), 5*time.Second, s.Name())
	}
}

func TestConcurrentSolves(t *testing.T) {
	for _, s := range solvers(t, 2) {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					p := NewPuzzle(uint64(g*100+i), 6)
					n, err := s.Solve(context.Background(), p)
					assert.NoError(t, err)
					assert.True(t, p.Solves(n), s.Name())
				}
			}()
		}
		wg.Wait()
	}
}
