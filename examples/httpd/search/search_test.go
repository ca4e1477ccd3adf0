package search

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reference scores every document of every shard and sorts them all: no
// top-k insertion, no merge.
func reference(ix *Index, q []float32, k int) []Hit {
	var all []Hit
	for s := range ix.Shards {
		for d := range ix.Docs {
			var sc float32
			for i := range ix.Dim {
				sc += ix.vecs[s][d*ix.Dim+i] * q[i]
			}
			all = append(all, Hit{s, d, sc})
		}
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if Better(a, b) {
			return -1
		}
		if Better(b, a) {
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

func searchers(t *testing.T) []Searcher {
	shared, release := workers.Acquire("search-test", 3)
	own := workers.New("search-test-own", 2)
	t.Cleanup(func() { release(); own.Close() })
	rng := Range{Label: "set", Set: shared}
	return []Searcher{Serial{}, ErrGroup{}, rng, Context{Label: "ctx", Set: shared},
		&Try{Label: "try", Inner: rng}, Range{Label: "own", Set: own}, Context{Label: "ctx-own", Set: own}}
}

func TestSearchersAgreeWithReference(t *testing.T) {
	ix := NewIndex(8, 50, 7, 3)
	for _, s := range searchers(t) {
		for _, k := range []int{1, 5, 100, 400, 401} {
			for _, text := range []string{"", "a", "scatter gather"} {
				q := ix.Query(text)
				got, err := s.Search(context.Background(), ix, q, k)
				require.NoError(t, err)
				assert.Equal(t, reference(ix, q, k), got, "%s k=%d q=%q", s.Name(), k, text)
			}
		}
	}
}

// TestSearchersConcurrently searches from many goroutines at once, as the
// server does (run with -race).
func TestSearchersConcurrently(t *testing.T) {
	ix := NewIndex(8, 30, 5, 9)
	q := ix.Query("x")
	want := reference(ix, q, 4)
	for _, s := range searchers(t) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					got, err := s.Search(context.Background(), ix, q, 4)
					assert.NoError(t, err)
					assert.Equal(t, want, got, s.Name())
				}
			}()
		}
		wg.Wait()
	}
}

func TestCancelled(t *testing.T) {
	ix := NewIndex(8, 10, 3, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, s := range searchers(t) {
		_, err := s.Search(ctx, ix, ix.Query("q"), 3)
		assert.ErrorIs(t, err, context.Canceled, s.Name())
	}
}

func TestQueryAndIndexDeterministic(t *testing.T) {
	a, b := NewIndex(2, 3, 4, 5), NewIndex(2, 3, 4, 5)
	assert.Equal(t, a.vecs, b.vecs)
	assert.Equal(t, a.Query("x"), b.Query("x"))
	assert.NotEqual(t, a.Query("x"), a.Query("y"))
	assert.NotEqual(t, a.vecs, NewIndex(2, 3, 4, 6).vecs)
	for _, v := range a.vecs[0] {
		assert.True(t, v >= -1 && v < 1, "%v out of [-1, 1)", v)
	}
	assert.PanicsWithValue(t, "search: NewIndex(0, 3, 4): every size must be at least 1", func() { NewIndex(0, 3, 4, 1) })
	assert.PanicsWithValue(t, "search: ScoreShard: k = 0, want at least 1", func() { a.ScoreShard(0, a.Query(""), 0, nil) })
}

func TestFormat(t *testing.T) {
	got := string(Format(nil, []Hit{{1, 2, 0.5}, {0, 7, -0.125}}))
	assert.Equal(t, "1 2 0.5\n0 7 -0.125\n", got)
}

func TestHandler(t *testing.T) {
	ix := NewIndex(8, 20, 4, 2)
	srv := httptest.NewServer(Handler(ix, searchers(t)...))
	defer srv.Close()
	get := func(path string) (int, string, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header.Get("Content-Length"), string(b)
	}
	want := string(Format(nil, reference(ix, ix.Query("hello"), 3)))
	for _, name := range []string{"serial", "errgroup", "set", "ctx", "try", "own", "ctx-own"} {
		code, cl, body := get("/search/" + name + "?q=hello&k=3")
		assert.Equal(t, 200, code, name)
		assert.NotEmpty(t, cl, "%s: Content-Length set", name)
		assert.Equal(t, want, body, name)
	}
	code, _, body := get("/search/serial?q=hello")
	assert.Equal(t, 200, code)
	assert.Equal(t, 10, strings.Count(body, "\n"), "default k")
	code, _, body = get("/search/serial?k=0")
	assert.Equal(t, 400, code)
	assert.Contains(t, body, `search: k = "0", want an integer in [1, 100]`)
	code, _, _ = get("/search/nope")
	assert.Equal(t, 404, code)
	code, _, body = get("/")
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "/search/errgroup?q=hello&k=10\n")
	assert.Panics(t, func() { Handler(ix, Serial{}, Serial{}) }, "duplicate names")
}
