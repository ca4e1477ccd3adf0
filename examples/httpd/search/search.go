// Package search is the scatter-gather core of the httpd example: an index
// split into shards of document vectors, a query scored against every shard
// (the top k hits of each), and the partial results merged. Searchers run
// the per-shard scoring serially, with errgroup, or on a workgang worker set
// in several ways, and must all return exactly the same hits.
package search

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
)

// Hit is one scored document.
type Hit struct {
	Shard int
	Doc   int
	Score float32
}

// Index is a set of shards of Docs vectors of Dim float32s each. It is
// read-only after NewIndex, so any number of goroutines may search it.
type Index struct {
	Shards, Docs, Dim int
	vecs              [][]float32 // vecs[s][d*Dim : (d+1)*Dim] is document d of shard s
}

// NewIndex returns an index of the given sizes, filled deterministically
// from seed. It panics if a size is below 1.
func NewIndex(shards, docs, dim int, seed uint64) *Index {
	if shards < 1 || docs < 1 || dim < 1 {
		panic(fmt.Sprintf("search: NewIndex(%d, %d, %d): every size must be at least 1", shards, docs, dim))
	}
	ix := &Index{Shards: shards, Docs: docs, Dim: dim, vecs: make([][]float32, shards)}
	x := seed | 1
	for s := range ix.vecs {
		v := make([]float32, docs*dim)
		for i := range v {
			x = xorshift(x)
			v[i] = float32(int64(x>>40)-(1<<23)) / (1 << 23) // in [-1, 1)
		}
		ix.vecs[s] = v
	}
	return ix
}

func xorshift(x uint64) uint64 {
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	return x
}

// Query returns the vector of the query text: a deterministic function of
// the text (its FNV-1a hash seeds the components).
func (ix *Index) Query(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	x := h.Sum64() | 1
	q := make([]float32, ix.Dim)
	for i := range q {
		x = xorshift(x)
		q[i] = float32(int64(x>>40)-(1<<23)) / (1 << 23)
	}
	return q
}

// ScoreShard appends to out the k best hits of shard s for query q, best
// first (see Better), and returns the extended slice.
func (ix *Index) ScoreShard(s int, q []float32, k int, out []Hit) []Hit {
	if k < 1 {
		panic(fmt.Sprintf("search: ScoreShard: k = %d, want at least 1", k))
	}
	v := ix.vecs[s]
	dim := ix.Dim
	start := len(out)
	for d := 0; d < ix.Docs; d++ {
		doc := v[d*dim : (d+1)*dim : (d+1)*dim]
		var sc float32
		for i, x := range doc {
			sc += x * q[i]
		}
		h := Hit{Shard: s, Doc: d, Score: sc}
		top := out[start:]
		if len(top) == k && !Better(h, top[k-1]) {
			continue
		}
		if len(top) < k {
			out = append(out, h)
			top = out[start:]
		}
		// Insertion into the sorted top k: k is small.
		i := len(top) - 1
		for i > 0 && Better(h, top[i-1]) {
			top[i] = top[i-1]
			i--
		}
		top[i] = h
	}
	return out
}

// Better reports whether a ranks before b: a higher score, then the lower
// shard, then the lower document, so the order is total and every searcher
// returns the same hits.
func Better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Shard != b.Shard {
		return a.Shard < b.Shard
	}
	return a.Doc < b.Doc
}

// Merge returns the k best of the per-shard hits, best first.
func Merge(parts [][]Hit, k int) []Hit {
	var all []Hit
	for _, p := range parts {
		all = append(all, p...)
	}
	slices.SortFunc(all, func(a, b Hit) int {
		switch {
		case Better(a, b):
			return -1
		case Better(b, a):
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

// Format appends the hits as text, one "shard doc score" line each, the
// score with the fewest digits that read back to the same float32.
func Format(dst []byte, hits []Hit) []byte {
	for _, h := range hits {
		dst = strconv.AppendInt(dst, int64(h.Shard), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(h.Doc), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendFloat(dst, float64(h.Score), 'g', -1, 32)
		dst = append(dst, '\n')
	}
	return dst
}

// Searcher scores a query against every shard of an index and merges the
// results. Search must be safe to call from many goroutines at once.
type Searcher interface {
	// Name names the searcher in tables and URLs ("serial", "errgroup", ...).
	Name() string
	// Search returns the k best hits for q, best first, or ctx's error if
	// it was cancelled before every shard was scored.
	Search(ctx context.Context, ix *Index, q []float32, k int) ([]Hit, error)
}

// Serial scores the shards one after the other on the caller.
type Serial struct{}

// Name returns "serial".
func (Serial) Name() string { return "serial" }

// Search scores every shard on the caller.
func (Serial) Search(ctx context.Context, ix *Index, q []float32, k int) ([]Hit, error) {
	parts := make([][]Hit, ix.Shards)
	for s := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		parts[s] = ix.ScoreShard(s, q, k, make([]Hit, 0, k))
	}
	return Merge(parts, k), nil
}
