// Command httpd is the scatter-gather server example: net/http on a
// loopback port, each request scoring a query against 8 shards of document
// vectors (package examples/httpd/search) and merging the top hits, with the
// per-shard work run serially, with errgroup, or on workgang worker sets of
// several sizes. It drives every variant with a closed-loop load generator
// of c keep-alive connections (package examples/httpd/load), checks every
// response body against the serial searcher's, and prints req/s and latency
// percentiles like wrk --latency.
//
// Usage:
//
//	go run ./examples/httpd [-c 1,16,256,1000] [-d 2s] [-warmup 500ms] [-rounds 1] [-variants all] [-sets 1,2,0]
//	go run ./examples/httpd -serve -addr 127.0.0.1:8080
//
// The variants, one URL each (GET / lists them):
//
//	/search/serial    the 8 shards one after the other on the request's goroutine
//	/search/errgroup  one goroutine per shard, per request (errgroup.Group)
//	/search/setS      ForRange, caller-runs, on a process-wide set of S workers (workers.Acquire)
//	/search/ctxS      RunContext on the same set
//	/search/tryS      setS when no other request is on it, else serial (the user-level rule)
//	/search/fifoS     ForRange on a set from workers.New, whose runs wait their turn
//
// for every size S of -sets (0 is GOMAXPROCS). With -serve it only serves,
// until interrupted (or for -serve-for), so that wrk can drive it:
//
//	go run ./examples/httpd -serve -addr 127.0.0.1:8080 &
//	wrk -t 2 -c 256 -d 5s --latency 'http://127.0.0.1:8080/search/set2?q=scatter+gather&k=10'
//
// Measured figures are in docs/perf.md; the perf test's httpd section runs
// the same measurement (go run ./perf -scenario httpd).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/workgang/workgang/examples/httpd/bench"
)

// At high -c the warm-up and the measured time are at least this much per
// connection (bench.Plan.LoadAt).
const (
	warmupPerConn   = 500 * time.Microsecond
	durationPerConn = time.Millisecond
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

type config struct {
	opts        bench.Options
	addr        string
	conns       []int
	d, warmup   time.Duration
	maxRequests int
	rounds      int
	variants    []string // nil: all
	serve       bool
	serveFor    time.Duration
}

// run runs the example and returns the exit code: 0 (also for -h), 2 for bad
// flags, 1 if the server failed or a response was wrong. If ready is not nil
// it gets the address once the server listens (for tests of -serve).
func run(args []string, stdout, stderr io.Writer, ready chan<- string) int {
	cfg, err := parse(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 2
	}
	s, err := bench.Start(cfg.addr, cfg.opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer s.Close()
	if ready != nil {
		ready <- s.Addr
	}
	if cfg.serve {
		return serve(cfg, s, stdout)
	}
	for _, v := range cfg.variants {
		if !slices.Contains(s.Variants, v) {
			fmt.Fprintf(stderr, "httpd: unknown variant %q (have %s)\n", v, strings.Join(s.Variants, ", "))
			return 2
		}
	}
	if cfg.variants == nil {
		cfg.variants = s.Variants
	}
	fmt.Fprintf(stdout, "httpd: %d shards x %d docs x %d dims, k=%d, GOMAXPROCS %d, %v per level after %v warm-up (at least %v and %v per connection), median of %d round(s); every body checked\n",
		cfg.opts.Shards, cfg.opts.Docs, cfg.opts.Dim, cfg.opts.K, runtime.GOMAXPROCS(0), cfg.d, cfg.warmup, durationPerConn, warmupPerConn, cfg.rounds)
	rows, err := s.Run(context.Background(), bench.Plan{Variants: cfg.variants, Conns: cfg.conns, Rounds: cfg.rounds,
		Load:          bench.Load{Duration: cfg.d, Warmup: cfg.warmup, MaxRequests: cfg.maxRequests},
		WarmupPerConn: warmupPerConn, DurationPerConn: durationPerConn})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	bench.PrintTable(stdout, rows)
	fmt.Fprintln(stdout)
	bench.PrintBests(stdout, bench.Bests(rows))
	return 0
}

// serve prints the URLs and serves until a signal or cfg.serveFor.
func serve(cfg config, s *bench.Server, stdout io.Writer) int {
	fmt.Fprintf(stdout, "httpd: serving on http://%s/ ; for example\n", s.Addr)
	fmt.Fprintf(stdout, "  wrk -t 2 -c 256 -d 5s --latency 'http://%s%s'\n", s.Addr, s.Path("serial"))
	for _, v := range s.Variants {
		fmt.Fprintf(stdout, "  http://%s%s\n", s.Addr, s.Path(v))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.serveFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.serveFor)
		defer cancel()
	}
	<-ctx.Done()
	return 0
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("httpd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := config{opts: bench.DefaultOptions()}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:0", "listen address; the host must be a loopback IP (port 0 picks one)")
	conns := fs.String("c", "1,16,256,1000", "comma list of connection counts")
	fs.DurationVar(&c.d, "d", 2*time.Second, "measured time per variant and connection count")
	fs.DurationVar(&c.warmup, "warmup", 500*time.Millisecond, "unmeasured time before each measurement (at high -c, more than a request's latency)")
	fs.IntVar(&c.rounds, "rounds", 1, "measure every level this many times, the variants interleaved; print the median req/s round")
	fs.IntVar(&c.maxRequests, "requests", 0, "stop a measurement after this many requests (0: no limit)")
	variants := fs.String("variants", "all", "comma list of variants to measure, or all")
	sets := fs.String("sets", "1,2,0", "comma list of worker-set sizes (0: GOMAXPROCS)")
	fs.IntVar(&c.opts.Shards, "shards", c.opts.Shards, "shards per index")
	fs.IntVar(&c.opts.Docs, "docs", c.opts.Docs, "documents per shard")
	fs.IntVar(&c.opts.Dim, "dim", c.opts.Dim, "dimensions per document vector")
	fs.IntVar(&c.opts.K, "k", c.opts.K, "hits per request")
	fs.StringVar(&c.opts.Query, "q", c.opts.Query, "query text of the measured requests")
	fs.BoolVar(&c.serve, "serve", false, "only serve (for wrk), until interrupted")
	fs.DurationVar(&c.serveFor, "serve-for", 0, "with -serve, stop after this long (0: until interrupted)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("httpd: unexpected arguments %q", fs.Args())
	}
	var err error
	if c.conns, err = intList("-c", *conns, 1); err != nil {
		return c, err
	}
	if c.opts.SetSizes, err = intList("-sets", *sets, 0); err != nil {
		return c, err
	}
	if *variants != "all" {
		c.variants = strings.Split(*variants, ",")
	}
	host, _, err := net.SplitHostPort(c.addr)
	if ip, perr := netip.ParseAddr(host); err != nil || perr != nil || !ip.IsLoopback() {
		return c, fmt.Errorf("httpd: -addr %q: want a loopback IP and a port, such as 127.0.0.1:8080", c.addr)
	}
	switch {
	case c.d <= 0 || c.warmup < 0 || c.maxRequests < 0 || c.rounds < 1:
		return c, fmt.Errorf("httpd: -d %v, -warmup %v, -requests %d, -rounds %d: want d > 0, rounds >= 1, the others >= 0", c.d, c.warmup, c.maxRequests, c.rounds)
	case slices.Max(c.opts.SetSizes) > 1024:
		return c, fmt.Errorf("httpd: -sets %s: at most 1024 workers", *sets)
	}
	return c, nil
}

// intList parses a comma list of integers of at least least.
func intList(flagName, s string, least int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < least {
			return nil, fmt.Errorf("httpd: %s %q: want a comma list of integers >= %d", flagName, s, least)
		}
		out = append(out, n)
	}
	return out, nil
}
