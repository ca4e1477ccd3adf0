// Package bench runs the httpd example's measurement: it builds the index
// and every searcher variant, serves them on a loopback port with net/http,
// drives each with the closed-loop load generator at several connection
// counts, and checks every response against the serial searcher's.
package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/workgang/workgang/examples/httpd/load"
	"github.com/workgang/workgang/examples/httpd/search"
	"github.com/workgang/workgang/workers"
)

// Options size the index and choose the set sizes of the workgang variants.
type Options struct {
	Shards, Docs, Dim int
	K                 int    // hits per request
	Query             string // the query text every request sends
	Seed              uint64
	// SetSizes are the worker-set sizes of the workgang variants; 0 means
	// GOMAXPROCS. Duplicates (after that) are dropped.
	SetSizes []int
}

// DefaultOptions: 8 shards whose serial scoring costs on the order of
// 100 us per request on a current x86 core (docs/perf.md has the measured
// time), sets of 1, 2 and GOMAXPROCS workers.
func DefaultOptions() Options {
	return Options{Shards: 8, Docs: 400, Dim: 32, K: 10, Query: "scatter gather", Seed: 1, SetSizes: []int{1, 2, 0}}
}

// Server is the example's HTTP server with every variant mounted.
type Server struct {
	Addr     string   // host:port it listens on (127.0.0.1)
	Variants []string // searcher names, serial first
	// Core is the subset of Variants a short measurement runs: all but
	// the ctx, try and fifo variants of a set of 1 (with one worker they
	// differ from set1 only in overhead).
	Core      []string
	ix        *search.Index
	opts      Options
	want      []byte // the serial searcher's response body
	srv       *http.Server
	done      chan error
	closeSets []func()
}

// Start builds the index and the searchers and serves them on addr (a
// loopback host; port 0 picks a free one).
func Start(addr string, o Options) (*Server, error) {
	if o.K < 1 || o.K > search.MaxK {
		return nil, fmt.Errorf("httpd: k = %d out of range [1, %d]", o.K, search.MaxK)
	}
	if o.Shards < 1 || o.Docs < 1 || o.Dim < 1 {
		return nil, fmt.Errorf("httpd: shards %d, docs %d, dim %d: each must be at least 1", o.Shards, o.Docs, o.Dim)
	}
	s := &Server{ix: search.NewIndex(o.Shards, o.Docs, o.Dim, o.Seed), opts: o}
	searchers := s.searchers()
	for _, sr := range searchers {
		s.Variants = append(s.Variants, sr.Name())
		if n := sr.Name(); n != "ctx1" && n != "try1" && n != "fifo1" {
			s.Core = append(s.Core, n)
		}
	}
	hits, err := search.Serial{}.Search(context.Background(), s.ix, s.ix.Query(o.Query), o.K)
	if err != nil {
		s.closeAll()
		return nil, err
	}
	s.want = search.Format(nil, hits)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.closeAll()
		return nil, fmt.Errorf("httpd: %w", err)
	}
	s.Addr = ln.Addr().String()
	s.srv = &http.Server{Handler: search.Handler(s.ix, searchers...), ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan error, 1)
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// searchers builds the variants: serial, errgroup, then per set size S a
// ForRange on a process-wide Acquire'd set ("setS"), a RunContext on the
// same set ("ctxS"), the user-level TryRun rule around setS ("tryS"), and a
// set created with workers.New whose runs wait their turn FIFO ("fifoS").
func (s *Server) searchers() []search.Searcher {
	list := []search.Searcher{search.Serial{}, search.ErrGroup{}}
	var sizes []int
	for _, n := range s.opts.SetSizes {
		if n == 0 {
			n = runtime.GOMAXPROCS(0)
		}
		if !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		sfx := strconv.Itoa(n)
		shared, release := workers.Acquire("httpd-"+sfx, n)
		own := workers.New("httpd-fifo-"+sfx, n)
		s.closeSets = append(s.closeSets, release, own.Close)
		rng := search.Range{Label: "set" + sfx, Set: shared}
		list = append(list, rng,
			search.Context{Label: "ctx" + sfx, Set: shared},
			&search.Try{Label: "try" + sfx, Inner: rng},
			search.Range{Label: "fifo" + sfx, Set: own})
	}
	return list
}

// Close stops the server and releases the sets.
func (s *Server) Close() error {
	err := s.srv.Close()
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	s.closeAll()
	return err
}

func (s *Server) closeAll() {
	for _, c := range s.closeSets {
		c()
	}
	s.closeSets = nil
}

// Path is the request target of a variant.
func (s *Server) Path(variant string) string {
	return "/search/" + variant + "?q=" + url.QueryEscape(s.opts.Query) + "&k=" + strconv.Itoa(s.opts.K)
}

// Want is the body every response must have: the serial searcher's.
func (s *Server) Want() []byte { return s.want }

// Load is one load level.
type Load struct {
	Conns       int
	Duration    time.Duration
	Warmup      time.Duration
	MaxRequests int
}

// Row is one variant at one connection count.
type Row struct {
	Variant string `json:"variant"`
	Conns   int    `json:"conns"`
	load.Result
}

// Measure drives the variant with l and checks every body against Want;
// it fails if any response was bad.
func (s *Server) Measure(ctx context.Context, variant string, l Load) (Row, error) {
	r, err := load.Run(ctx, load.Config{
		Addr: s.Addr, Path: s.Path(variant), Conns: l.Conns,
		Duration: l.Duration, Warmup: l.Warmup, MaxRequests: l.MaxRequests,
		Check: s.check,
	})
	if err != nil {
		return Row{}, fmt.Errorf("httpd: %s at c=%d: %w", variant, l.Conns, err)
	}
	if r.Bad > 0 {
		return Row{}, fmt.Errorf("httpd: %s at c=%d: %d bad responses, the first: %s", variant, l.Conns, r.Bad, r.FirstBad)
	}
	return Row{Variant: variant, Conns: l.Conns, Result: r}, nil
}

func (s *Server) check(body []byte) error {
	if !bytes.Equal(body, s.want) {
		return fmt.Errorf("body %q differs from the serial searcher's %q", body, s.want)
	}
	return nil
}

// IsWorkgang reports whether a variant runs on a worker set.
func IsWorkgang(variant string) bool {
	return variant != "serial" && variant != "errgroup"
}
