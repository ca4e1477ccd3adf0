package mark_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseShape(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want mark.Shape
		err  bool
	}{
		{"random", mark.Random, false},
		{"PowerLaw", mark.PowerLaw, false},
		{"lists", mark.Lists, false},
		{"tree", 0, true},
		{"", 0, true},
	} {
		got, err := mark.ParseShape(tc.in)
		if tc.err {
			assert.Error(t, err, "ParseShape(%q)", tc.in)
			continue
		}
		require.NoError(t, err, "ParseShape(%q)", tc.in)
		assert.Equal(t, tc.want, got)
		assert.True(t, strings.EqualFold(tc.in, got.String()))
	}
	assert.Equal(t, "Shape(9)", mark.Shape(9).String())
}

func TestGraphShapes(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		shape     mark.Shape
		roots     int
		minMarked int // fraction of n that must be live, in percent
	}{
		{mark.Random, 1024, 90},
		{mark.PowerLaw, 1024, 50},
		{mark.Lists, 1, 100},
	} {
		t.Run(tc.shape.String(), func(t *testing.T) {
			g := mark.NewGraph(tc.shape, n, 7)
			require.Equal(t, n, g.Len())
			assert.Len(t, g.Roots(), tc.roots)
			edges := 0
			for obj := range uint32(n) {
				for _, c := range g.Children(obj) {
					require.Less(t, c, uint32(n))
				}
				edges += len(g.Children(obj))
			}
			assert.Equal(t, g.Edges(), edges)
			b := mark.NewBitmap(n)
			marked := mark.MarkSerial(g, b)
			assert.Equal(t, marked, b.Count())
			assert.GreaterOrEqual(t, marked*100, tc.minMarked*n, "live objects")

			// Deterministic for a seed, different across seeds.
			g2 := mark.NewGraph(tc.shape, n, 7)
			b2 := mark.NewBitmap(n)
			mark.MarkSerial(g2, b2)
			_, differ := b.FirstDifference(b2)
			assert.False(t, differ, "same seed, same graph")
			assert.Equal(t, g.Edges(), g2.Edges())
			assert.Contains(t, g.String(), fmt.Sprintf("%d objects", n))
		})
	}
}

func TestListsShapeNeedsStealing(t *testing.T) {
	g := mark.NewGraph(mark.Lists, 10000, 1)
	require.Equal(t, []uint32{0}, g.Roots())
	assert.Len(t, g.Children(0), 64, "the root points at every list head")
	// Every other object has at most one child: a list.
	for obj := uint32(1); obj < 10000; obj++ {
		require.LessOrEqual(t, len(g.Children(obj)), 1)
	}
}

// TestMarksAgree is the central check: for every shape, seed and worker
// count, the stealing and static marks mark exactly the serial mark's set,
// and count each object once.
func TestMarksAgree(t *testing.T) {
	w := workers.New("mark-test", 3)
	defer w.Close()
	m := mark.NewMarker(w)
	m.SetObjectsPerWorker(1000) // small graphs still get every worker asked for
	for _, shape := range mark.Shapes() {
		for _, seed := range []uint64{1, 2} {
			for _, n := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/seed=%d/workers=%d", shape, seed, n), func(t *testing.T) {
					g := mark.NewGraph(shape, 30000, seed)
					ref := mark.NewBitmap(g.Len())
					want := mark.MarkSerial(g, ref)

					b := mark.NewBitmap(g.Len())
					for round := range 3 { // reuse: the bitmap is cleared by Mark
						st := m.Mark(g, b, n)
						if obj, differ := ref.FirstDifference(b); differ {
							t.Fatalf("round %d: stealing mark differs from serial at object %d", round, obj)
						}
						require.Equal(t, want, st.Marked, "round %d: objects scanned", round)
						assert.Equal(t, n, st.Workers)
						assert.Equal(t, st.Workers, st.Drain.Workers, "every copy reported its drain time")
					}

					s := mark.NewBitmap(g.Len())
					got, err := mark.MarkStatic(g, s, n)
					require.NoError(t, err)
					require.Equal(t, want, got)
					_, differ := ref.FirstDifference(s)
					require.False(t, differ, "static mark differs from serial")
				})
			}
		}
	}
}

// TestMarkerUsesPolicy checks that a small graph gets one worker (the policy's
// need) and a large one the cap, and that the count then shrinks by halves.
func TestMarkerUsesPolicy(t *testing.T) {
	w := workers.New("mark-policy", 3)
	defer w.Close()
	m := mark.NewMarker(w)
	small := mark.NewGraph(mark.Random, 1000, 1)
	big := mark.NewGraph(mark.Random, 200000, 1) // needs ceil(200000/65536) = 4 > 3
	var got []int
	for _, g := range []*mark.Graph{small, big, small, small} {
		got = append(got, m.Mark(g, mark.NewBitmap(g.Len()), 3).Workers)
	}
	assert.Equal(t, []int{1, 3, 2, 1}, got)
}

func TestStealingSpreadsLists(t *testing.T) {
	w := workers.New("mark-lists", 2)
	defer w.Close()
	m := mark.NewMarker(w)
	g := mark.NewGraph(mark.Lists, 150000, 3) // big enough for the policy to want 2 workers
	for range 5 {
		st := m.Mark(g, mark.NewBitmap(g.Len()), 2)
		require.Equal(t, 2, st.Workers)
		require.Equal(t, 150000, st.Marked)
		// One copy scanned the only root and so held every list head;
		// the other can have marked something only by stealing. (How
		// much each got depends on scheduling, so that is not asserted.)
		if st.Steals == 0 {
			assert.Equal(t, int64(0), st.MarkedPerWorker.Min, "a worker marked objects without stealing any")
		}
		assert.Len(t, st.Log(), 5)
	}
}

func TestMarkStaticRejectsBadP(t *testing.T) {
	g := mark.NewGraph(mark.Random, 100, 1)
	_, err := mark.MarkStatic(g, mark.NewBitmap(100), 0)
	assert.EqualError(t, err, "mark: MarkStatic: p = 0, want >= 1")
}

// TestMarkerUsableAfterPanic has a mark fail in one of its copies midway (a
// bitmap one word short of the graph makes the copy that first reaches one of
// the last 64 objects index out of range): Mark must re-raise the panic, and
// the next marks must be exact, which needs the values the aborted mark left
// in the deques (most of the roots, pushed before the drain) to be dropped
// rather than scanned again.
func TestMarkerUsableAfterPanic(t *testing.T) {
	w := workers.New("mark-panic", 3)
	defer w.Close()
	m := mark.NewMarker(w)
	m.SetObjectsPerWorker(1000)
	const n = 782 * 64
	g := mark.NewGraph(mark.Random, n, 4)
	ref := mark.NewBitmap(g.Len())
	want := mark.MarkSerial(g, ref)
	reachable := 0 // of the last 64 objects: the short mark panics if any is
	for i := uint32(n - 64); i < n; i++ {
		if ref.Marked(i) {
			reachable++
		}
	}
	require.Positive(t, reachable, "none of the last 64 objects is reachable")
	for round := range 4 {
		copies := 3
		if round == 3 {
			copies = 1 // the one-copy mark: inline, its own stack
		}
		assert.Panics(t, func() { m.Mark(g, mark.NewBitmap(n-64), copies) }, "round %d: a copy indexed past the bitmap", round)
		b := mark.NewBitmap(g.Len())
		st := m.Mark(g, b, copies)
		require.Equal(t, copies, st.Workers)
		require.Equal(t, want, st.Marked, "round %d: objects scanned after an aborted mark", round)
		_, differ := ref.FirstDifference(b)
		require.False(t, differ, "round %d: mark after an aborted mark differs from serial", round)
	}
}
