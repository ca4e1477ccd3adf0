package mark

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"sync/atomic"
)

// Shape selects how a synthetic graph's objects point to each other.
type Shape int

const (
	// Random gives each object a fan-out drawn uniformly from 0..8 (mean
	// 4), each edge to a uniformly random object. Reached from 1024 random
	// roots, about 98% of the objects are live (those nobody points to are
	// not).
	Random Shape = iota
	// PowerLaw draws fan-outs from a Pareto-like law (mean about 4, most
	// objects 0..3, a few with tens of thousands of children), edges to
	// uniformly random objects: hubs that flood one worker's queue.
	PowerLaw
	// Lists hangs 64 long singly linked lists off one root object, their
	// nodes scattered through the heap. A worker can follow only one list
	// at a time, so only stealing the list heads spreads the work; a
	// static partition of the roots gives it all to one goroutine.
	Lists
)

var shapeNames = [...]string{Random: "random", PowerLaw: "powerlaw", Lists: "lists"}

// Shapes returns every shape, in declaration order.
func Shapes() []Shape { return []Shape{Random, PowerLaw, Lists} }

// String returns the shape's name as ParseShape accepts it.
func (s Shape) String() string {
	if s >= 0 && int(s) < len(shapeNames) {
		return shapeNames[s]
	}
	return fmt.Sprintf("Shape(%d)", int(s))
}

// MarshalText encodes the shape as its name (for JSON results).
func (s Shape) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseShape returns the shape called name (case-insensitive).
func ParseShape(name string) (Shape, error) {
	for s, n := range shapeNames {
		if strings.EqualFold(name, n) {
			return Shape(s), nil
		}
	}
	return 0, fmt.Errorf("mark: unknown shape %q (want %s)", name, strings.Join(shapeNames[:], ", "))
}

// MaxObjects is the largest graph NewGraph builds: object ids are uint32 and
// the edge count must fit too.
const MaxObjects = 1 << 26

// Graph is an object graph in compressed sparse row form: the children of
// object i are edges[start[i]:start[i+1]], the pointer fields of a heap
// object. Objects are numbered 0..Len()-1. NewGraph builds synthetic graphs;
// NewCSR wraps the arrays of a heap (see package heap). A Graph must not
// change during a mark; between marks its owner may rewrite edges and roots in
// place (a mutator does), with a happens-before edge to the next mark (the
// start of a worker-set run gives it). A Graph is safe for concurrent reads.
type Graph struct {
	start []uint32
	edges []uint32
	roots []uint32
}

// NewCSR returns a graph over the given arrays, which it aliases (it copies
// nothing): len(start)-1 objects, the children of object i being
// edges[start[i]:start[i+1]], marked from roots. It panics if start has fewer
// than two entries or does not end at len(edges). The caller keeps every
// child and root below len(start)-1 and start non-decreasing; a mark reading
// past that panics with an index error.
func NewCSR(start, edges, roots []uint32) *Graph {
	if len(start) < 2 || len(start)-1 > MaxObjects {
		panic(fmt.Sprintf("mark: NewCSR: %d objects out of range [1, %d]", len(start)-1, MaxObjects))
	}
	if int(start[len(start)-1]) != len(edges) {
		panic(fmt.Sprintf("mark: NewCSR: start ends at %d, len(edges) = %d; want equal", start[len(start)-1], len(edges)))
	}
	return &Graph{start: start, edges: edges, roots: roots}
}

// listCount is the number of lists of a Lists graph.
const listCount = 64

// rootCount is the number of roots of Random and PowerLaw graphs.
const rootCount = 1024

// NewGraph builds a graph of n objects of the given shape. The same shape, n
// and seed always give the same graph. It panics if n is outside
// [2, MaxObjects] or the shape is unknown.
func NewGraph(shape Shape, n int, seed uint64) *Graph {
	if n < 2 || n > MaxObjects {
		panic(fmt.Sprintf("mark: NewGraph: n = %d out of range [2, %d]", n, MaxObjects))
	}
	rng := rand.New(rand.NewPCG(seed, uint64(shape)+0x5eed))
	g := &Graph{start: make([]uint32, n+1)}
	switch shape {
	case Random:
		g.buildRandom(rng, func() int { return rng.IntN(9) })
	case PowerLaw:
		g.buildRandom(rng, func() int { return paretoFanout(rng, n) })
	case Lists:
		g.buildLists(rng)
	default:
		panic(fmt.Sprintf("mark: NewGraph: unknown shape %v", shape))
	}
	return g
}

// paretoFanout draws floor(2 * U^(-1/1.6)) - 1: P(k >= x) falls like
// x^-1.6, the mean is about 4, and the cap keeps one hub below n/8.
func paretoFanout(rng *rand.Rand, n int) int {
	u := 1 - rng.Float64() // (0, 1]
	k := int(2*math.Pow(u, -1/1.6)) - 1
	return min(k, max(1, n/8), 1<<16)
}

// buildRandom draws each object's fan-out from fanout and its children
// uniformly, and picks rootCount random roots.
func (g *Graph) buildRandom(rng *rand.Rand, fanout func() int) {
	n := len(g.start) - 1
	total := 0
	for i := range n {
		g.start[i] = uint32(total)
		total += fanout()
		if total > math.MaxUint32 {
			panic("mark: NewGraph: too many edges")
		}
	}
	g.start[n] = uint32(total)
	g.edges = make([]uint32, total)
	for i := range g.edges {
		g.edges[i] = uint32(rng.IntN(n))
	}
	g.roots = make([]uint32, min(rootCount, n))
	for i := range g.roots {
		g.roots[i] = uint32(rng.IntN(n))
	}
}

// buildLists makes object 0 the single root, pointing at the heads of
// listCount lists that share the other objects; list nodes are placed in a
// random order so that each step of a list is a cache miss, as in a real heap.
func (g *Graph) buildLists(rng *rand.Rand) {
	n := len(g.start) - 1
	k := min(listCount, n-1)
	// perm[j] is the object id of the j-th list node, over all lists.
	perm := make([]uint32, n-1)
	for i := range perm {
		perm[i] = uint32(i + 1)
	}
	rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	next := make([]uint32, n) // next[obj]+1, 0 for the end of a list
	heads := make([]uint32, k)
	per := len(perm) / k
	for l := range k {
		lo, hi := l*per, (l+1)*per
		if l == k-1 {
			hi = len(perm)
		}
		heads[l] = perm[lo]
		for j := lo; j+1 < hi; j++ {
			next[perm[j]] = perm[j+1] + 1
		}
	}
	g.edges = make([]uint32, 0, n-1+k)
	g.start[0] = 0
	g.edges = append(g.edges, heads...)
	for obj := 1; obj < n; obj++ {
		g.start[obj] = uint32(len(g.edges))
		if nx := next[obj]; nx != 0 {
			g.edges = append(g.edges, nx-1)
		}
	}
	g.start[n] = uint32(len(g.edges))
	g.roots = []uint32{0}
}

// Len returns the number of objects.
func (g *Graph) Len() int { return len(g.start) - 1 }

// Edges returns the number of edges (references).
func (g *Graph) Edges() int { return len(g.edges) }

// Roots returns the root objects. The caller must not modify the slice.
func (g *Graph) Roots() []uint32 { return g.roots }

// Children returns the objects obj points to. The caller must not modify the
// slice.
func (g *Graph) Children(obj uint32) []uint32 { return g.edges[g.start[obj]:g.start[obj+1]] }

// String describes the graph in one line.
func (g *Graph) String() string {
	return fmt.Sprintf("graph: %d objects, %d edges, %d roots", g.Len(), g.Edges(), len(g.roots))
}

// Bitmap is a mark bitmap: one bit per object. Serial marking uses plain
// reads and writes; parallel marking uses atomic loads and atomic ORs on the
// same words. The two must not overlap in time: each phase's start and end
// is synchronized with the other's (a worker run or an errgroup Wait does
// that), which is what keeps the mixed access free of data races.
type Bitmap struct {
	words []uint64
}

// NewBitmap returns a cleared bitmap for n objects.
func NewBitmap(n int) *Bitmap { return &Bitmap{words: make([]uint64, (n+63)/64)} }

// Words returns the number of 64-bit words.
func (b *Bitmap) Words() int { return len(b.words) }

// Clear unmarks every object.
func (b *Bitmap) Clear() { clear(b.words) }

// ClearWords unmarks the objects of words [lo, hi), objects 64*lo up to
// 64*hi: a chunk of a parallel clear.
func (b *Bitmap) ClearWords(lo, hi int) { clear(b.words[lo:hi]) }

// Word returns word i: the marks of objects 64*i up to 64*i+63, bit k for
// object 64*i+k. A sweep reads the bitmap a word at a time.
func (b *Bitmap) Word(i int) uint64 { return b.words[i] }

// Len returns the number of objects the bitmap has room for, rounded up to a
// multiple of 64.
func (b *Bitmap) Len() int { return 64 * len(b.words) }

// Marked reports whether obj is marked.
func (b *Bitmap) Marked(obj uint32) bool { return b.words[obj/64]&(1<<(obj%64)) != 0 }

// Mark marks obj and reports whether it was unmarked. It is not safe for
// concurrent use: parallel marks use MarkAtomic.
func (b *Bitmap) Mark(obj uint32) bool {
	w := &b.words[obj/64]
	bit := uint64(1) << (obj % 64)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
	return true
}

// MarkAtomic marks obj and reports whether this call marked it: of all
// concurrent calls for one object exactly one returns true.
func (b *Bitmap) MarkAtomic(obj uint32) bool {
	w := &b.words[obj/64]
	bit := uint64(1) << (obj % 64)
	// The load filters objects already marked (most visits in a graph with
	// in-degree > 1) without pulling the line exclusive. The OR is the
	// claim: it returns the word before our bit was set, so exactly one
	// caller sees the bit clear. It orders nothing else: the object's
	// children are immutable, published before the mark phase started.
	if atomic.LoadUint64(w)&bit != 0 {
		return false
	}
	return atomic.OrUint64(w, bit)&bit == 0
}

// Count returns the number of marked objects.
func (b *Bitmap) Count() int {
	n := 0
	for _, w := range b.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// FirstDifference returns the lowest object marked in exactly one of b and
// o, and false if their marked sets are identical. It panics if the bitmaps
// have different sizes.
func (b *Bitmap) FirstDifference(o *Bitmap) (uint32, bool) {
	if len(b.words) != len(o.words) {
		panic("mark: FirstDifference: bitmaps of different sizes")
	}
	for i, w := range b.words {
		if d := w ^ o.words[i]; d != 0 {
			return uint32(i*64 + bits.TrailingZeros64(d)), true
		}
	}
	return 0, false
}
