package claim

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSubtasksEachClaimedOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k, n   int
		rounds int
	}{
		{"empty", 0, 2, 3},
		{"one", 1, 4, 50},
		{"fewer than copies", 3, 8, 50},
		{"more than copies", 100, 4, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Subtasks
			s.Reset(tc.k)
			for range tc.rounds {
				wins := make([]atomic.Int32, tc.k)
				testutil.RunCopies(tc.n, func(int) {
					for i := range tc.k {
						if s.TryClaim(i) {
							wins[i].Add(1)
						}
					}
				})
				for i := range wins {
					if got := wins[i].Load(); got != 1 {
						t.Fatalf("subtask %d won %d times; want 1", i, got)
					}
				}
				for i := range tc.k {
					require.False(t, s.TryClaim(i), "subtask %d after the run", i)
				}
				s.Reset(tc.k)
			}
		})
	}
}

func TestSubtasksResetReusesAndGrows(t *testing.T) {
	var s Subtasks
	assert.Panics(t, func() { s.TryClaim(0) }, "the zero value has no subtasks")
	s.Reset(4)
	for i := range 4 {
		require.True(t, s.TryClaim(i))
	}
	arr := &s.claimed[0]
	s.Reset(2) // shrinks in place, every flag unclaimed
	assert.Same(t, arr, &s.claimed[0])
	assert.Len(t, s.claimed, 2)
	require.True(t, s.TryClaim(0))
	require.True(t, s.TryClaim(1))
	s.Reset(4) // grows back within the array: the old flags 2, 3 are cleared too
	for i := range 4 {
		require.True(t, s.TryClaim(i), "subtask %d", i)
	}
	s.Reset(64) // grows past it
	assert.Len(t, s.claimed, 64)
	assert.True(t, s.TryClaim(63))
}

func TestSubtasksPanics(t *testing.T) {
	var s Subtasks
	assert.PanicsWithValue(t, "claim: Subtasks.Reset: negative count -1", func() { s.Reset(-1) })
	s.Reset(2)
	assert.Panics(t, func() { s.TryClaim(2) })
}

func TestSequentialInOrderOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		k, n int
	}{
		{"empty", 0, 3},
		{"one", 1, 3},
		{"many", 1000, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Sequential
			s.Reset(tc.k)
			for round := range 20 {
				counts := make([]atomic.Int32, tc.k)
				testutil.RunCopies(tc.n, func(int) {
					last := -1
					for {
						i, ok := s.claim()
						if !ok {
							break
						}
						if i <= last {
							t.Errorf("round %d: got %d after %d; want increasing", round, i, last)
						}
						last = i
						counts[i].Add(1)
					}
				})
				for i := range counts {
					if got := counts[i].Load(); got != 1 {
						t.Fatalf("round %d: index %d handed out %d times; want 1", round, i, got)
					}
				}
				_, ok := s.claim()
				assert.False(t, ok)
				s.Reset(tc.k)
			}
		})
	}
}

func TestSequentialZeroValueAndAll(t *testing.T) {
	var s Sequential
	_, ok := s.claim()
	assert.False(t, ok, "zero value hands out nothing")
	s.Reset(4)
	var got []int
	for i := range s.All() {
		got = append(got, i)
	}
	assert.Equal(t, []int{0, 1, 2, 3}, got)

	// Breaking out of the loop consumes only the index it saw.
	s.Reset(4)
	for i := range s.All() {
		if i == 1 {
			break
		}
	}
	i, ok := s.claim()
	assert.Equal(t, []any{2, true}, []any{i, ok})
	assert.PanicsWithValue(t, "claim: Sequential.Reset: negative count -2", func() { s.Reset(-2) })
}
