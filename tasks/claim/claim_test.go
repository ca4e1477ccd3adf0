package claim_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks/claim"
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
			s := claim.NewSubtasks(tc.k)
			require.Equal(t, tc.k, s.Len())
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
				assert.NoError(t, s.Check())
				assert.Nil(t, s.Unclaimed())
				s.Reset()
			}
		})
	}
}

func TestSubtasksAll(t *testing.T) {
	s := claim.NewSubtasks(50)
	var mu sync.Mutex
	seen := map[int]int{}
	testutil.RunCopies(3, func(int) {
		for i := range s.All() {
			mu.Lock()
			seen[i]++
			mu.Unlock()
		}
	})
	require.Len(t, seen, 50)
	for i, c := range seen {
		assert.Equal(t, 1, c, "subtask %d", i)
	}

	// Breaking out of the loop leaves the rest claimable.
	s.Reset()
	for i := range s.All() {
		if i == 2 {
			break
		}
	}
	assert.Equal(t, []int{3, 4}, s.Unclaimed()[:2])
}

func TestSubtasksCheckNamesSkipped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		k       int
		claimed []int
		want    string
	}{
		{"all claimed", 3, []int{0, 1, 2}, ""},
		{"one skipped", 3, []int{0, 2}, "claim: 1 of 3 subtasks never claimed: 1"},
		{"several skipped", 5, []int{1, 3}, "claim: 3 of 5 subtasks never claimed: 0, 2, 4"},
		{"none claimed", 2, nil, "claim: 2 of 2 subtasks never claimed: 0, 1"},
		{"no subtasks", 0, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := claim.NewSubtasks(tc.k)
			for _, i := range tc.claimed {
				require.True(t, s.TryClaim(i))
				require.False(t, s.TryClaim(i), "second claim of %d", i)
				require.True(t, s.Claimed(i))
			}
			err := s.Check()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			if got := err.Error(); got != tc.want {
				t.Errorf("Check() = %q; want %q", got, tc.want)
			}
			var se *claim.SkippedError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.k, se.Total)
		})
	}
}

func TestSubtasksPanics(t *testing.T) {
	assert.PanicsWithValue(t, "claim: NewSubtasks: negative count -1", func() { claim.NewSubtasks(-1) })
	s := claim.NewSubtasks(2)
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
			s := claim.NewSequential(tc.k)
			require.Equal(t, tc.k, s.Len())
			for round := range 20 {
				counts := make([]atomic.Int32, tc.k)
				testutil.RunCopies(tc.n, func(int) {
					last := -1
					for {
						i, ok := s.Next()
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
				assert.Equal(t, tc.k, s.Claimed())
				_, ok := s.Next()
				assert.False(t, ok)
				s.Reset(tc.k)
			}
		})
	}
}

func TestSequentialZeroValueAndAll(t *testing.T) {
	var s claim.Sequential
	_, ok := s.Next()
	assert.False(t, ok, "zero value hands out nothing")
	s.Reset(4)
	var got []int
	for i := range s.All() {
		got = append(got, i)
	}
	assert.Equal(t, []int{0, 1, 2, 3}, got)
	assert.PanicsWithValue(t, "claim: Sequential.Reset: negative count -2", func() { s.Reset(-2) })
}
