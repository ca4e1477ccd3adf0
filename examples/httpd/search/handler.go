package search

import (
	"fmt"
	"net/http"
	"strconv"
)

// MaxK is the most hits a request may ask for.
const MaxK = 100

// Handler returns an HTTP handler that serves GET /search/NAME?q=TEXT&k=K
// with the searcher called NAME: the k (default 10, at most MaxK) best hits
// for the query TEXT, as Format writes them, with a Content-Length (so
// responses are never chunked). GET / lists the searchers' paths. It panics
// if two searchers have the same name.
func Handler(ix *Index, searchers ...Searcher) http.Handler {
	mux := http.NewServeMux()
	var index []byte
	for _, s := range searchers {
		path := "/search/" + s.Name()
		index = fmt.Appendf(index, "%s?q=hello&k=10\n", path)
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, ix, s)
		}) // http.ServeMux panics on a duplicate pattern
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(index)
	})
	return mux
}

func serve(w http.ResponseWriter, r *http.Request, ix *Index, s Searcher) {
	k := 10
	if ks := r.URL.Query().Get("k"); ks != "" {
		n, err := strconv.Atoi(ks)
		if err != nil || n < 1 || n > MaxK {
			http.Error(w, fmt.Sprintf("search: k = %q, want an integer in [1, %d]", ks, MaxK), http.StatusBadRequest)
			return
		}
		k = n
	}
	hits, err := s.Search(r.Context(), ix, ix.Query(r.URL.Query().Get("q")), k)
	if err != nil {
		http.Error(w, "search: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	body := Format(make([]byte, 0, 32*len(hits)), hits)
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}
