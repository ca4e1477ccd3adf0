package workers_test

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
	"github.com/workgang/workgang/workers"
)

// scaler is a long-lived body: its method values, built once, and the
// scaler itself as a Task cost nothing per call.
type scaler struct {
	xs   []float64
	k    float64
	each func(int) // s.scale, built once
}

func (s *scaler) scale(i int)  { s.xs[i] *= s.k }
func (s *scaler) Name() string { return "scale" }
func (s *scaler) Work(i int)   { s.xs[i] *= s.k }

// TestAllocationsOnceWarm pins the allocation counts the package doc and
// docs/threading-model.md ("Allocations") state for each call on a
// long-lived set once warm: none of its own but ForChunks' (its task, and
// each copy's iterator and its state) and the context calls' (the run's
// context and cancel function); a body closure written at the call that
// captures a variable costs one more, built once (or a method value stored
// once, or a Task value reused) nothing.
func TestAllocationsOnceWarm(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	w := workers.New("allocs", 2)
	defer w.Close()
	bg := context.Background()
	s := &scaler{xs: make([]float64, 100), k: 1}
	s.each = s.scale
	xs, k := s.xs, 1.0
	each := func(i int) { xs[i] *= k } // built once: captures, but made outside the calls
	body := func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			xs[i] *= k
		}
	}
	chunks := func(c iter.Seq2[int, int]) {
		for lo, hi := range c {
			body(0, lo, hi)
		}
	}
	ctxEach := func(_ context.Context, i int) error { xs[i] *= k; return nil }
	member := func(m *team.Member) { m.Barrier() }
	for _, tc := range []struct {
		name string
		call func()
		want float64 // exact, or at most for ForChunks
	}{
		{"RunN, a Task value reused", func() { w.RunN(s, 2) }, 0},
		{"Run, a Task value reused", func() { w.Run(s) }, 0},
		{"RunN, tasks.Func built at the call", func() { w.RunN(tasks.Func("scale", func(i int) { xs[i] *= k }), 2) }, 2},
		{"ForRange, body built once", func() { w.ForRange(100, body, workers.WithCopies(2)) }, 0},
		{"ForRange, closure at the call", func() {
			w.ForRange(100, func(_, lo, hi int) { xs[lo] *= k }, workers.WithCopies(2))
		}, 1},
		{"Do, closure built once", func() { w.Do(100, each) }, 0},
		{"Do, method value stored once", func() { w.Do(100, s.each) }, 0},
		{"Do, method value at the call", func() { w.Do(100, s.scale) }, 1},
		{"Do, closure at the call", func() { w.Do(100, func(i int) { xs[i] *= k }) }, 1},
		{"Do, closure capturing nothing", func() { w.Do(100, func(int) {}) }, 0},
		{"ForChunks, two copies", func() { w.ForChunks(100, chunks, workers.WithCopies(2)) }, 5},
		{"RunContext", func() { _ = w.RunContext(bg, 2, ctxEach) }, 2},
		{"ForRangeContext", func() {
			_ = w.ForRangeContext(bg, 100, func(context.Context, int, int, int) error { return nil })
		}, 2},
		{"RunTeam", func() { w.RunTeam("team", 2, member) }, 0},
		{"Default", func() { _ = workers.Default() }, 0},
	} {
		tc.call() // warm the pools and create the workers
		got := testing.AllocsPerRun(200, tc.call)
		if tc.name == "ForChunks, two copies" {
			assert.LessOrEqual(t, got, tc.want, tc.name) // a copy that finds no chunk left makes no iterator
			assert.GreaterOrEqual(t, got, 3.0, tc.name)
			continue
		}
		assert.Equal(t, tc.want, got, tc.name)
	}
	workers.ResetDefault()
}
