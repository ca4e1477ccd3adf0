// Package load is a closed-loop HTTP load generator in the manner of wrk:
// N keep-alive connections, each sending one GET and reading its response
// before sending the next, for a bounded time and count; it reports
// requests per second and latency percentiles (wrk --latency's p50, p75,
// p90, p99). It speaks just enough HTTP/1.1 for servers that send a
// Content-Length, and talks to loopback addresses only.
package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/examples/internal/lat"
)

// Config is one load run.
type Config struct {
	Addr     string        // host:port; the host must be a loopback IP
	Path     string        // request target, such as "/search/serial?q=x"
	Conns    int           // connections, each with one request in flight
	Duration time.Duration // measured time, after Warmup
	Warmup   time.Duration // time before the measurement, not counted
	// MaxRequests, if positive, ends the run early: no connection starts a
	// request once this many have started in the measured time (with no
	// warm-up, exactly this many are measured).
	MaxRequests int
	// Check is called with every response body (status 200); an error
	// counts the response as bad. Nil accepts any body.
	Check func(body []byte) error
}

// Result is what a load run measured.
type Result struct {
	Requests  int           `json:"requests"`   // good responses completed in the measured time
	Bad       int           `json:"bad"`        // responses that were not 200 or failed Check
	Elapsed   time.Duration `json:"elapsed_ns"` // measured wall time
	ReqPerSec float64       `json:"throughput_rps"`
	Latency   lat.Summary   `json:"latency"`
	// FirstBad is the first bad response's problem, "" if none.
	FirstBad string `json:"first_bad,omitempty"`
}

// Run dials cfg.Conns connections, warms up, measures, and closes them. It
// returns an error if a connection cannot be made or breaks, or cfg is
// invalid; bad responses are counted, not errors.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	conns := make([]net.Conn, 0, cfg.Conns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var d net.Dialer
	for range cfg.Conns {
		c, err := d.DialContext(ctx, "tcp", cfg.Addr)
		if err != nil {
			return Result{}, fmt.Errorf("load: %w", err)
		}
		conns = append(conns, c)
	}
	req := []byte("GET " + cfg.Path + " HTTP/1.1\r\nHost: " + cfg.Addr + "\r\nUser-Agent: workgang-load\r\n\r\n")

	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	stopAt := measureFrom.Add(cfg.Duration)
	var (
		budget  atomic.Int64 // measured requests left to start when MaxRequests > 0
		wg      sync.WaitGroup
		results = make([]connResult, len(conns))
	)
	budget.Store(int64(cfg.MaxRequests))
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unblock := func() {
		for _, c := range conns {
			c.SetDeadline(time.Now())
		}
	}
	stopper := context.AfterFunc(ctx, unblock) // reads end on cancellation
	defer stopper()
	// At the end of the measured time the requests still in flight are
	// abandoned, as wrk does: their reads fail with a timeout, which drive
	// takes for the end after stopAt.
	timer := time.AfterFunc(time.Until(stopAt), unblock)
	defer timer.Stop()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = drive(c, req, cfg, measureFrom, stopAt, &budget)
			if results[i].err != nil {
				cancel() // one broken connection ends the run
			}
		}()
	}
	wg.Wait() // every drive's writes to results happen before Wait returns
	end := time.Now()

	if parent.Err() != nil { // reads failed because the caller cancelled
		return Result{}, fmt.Errorf("load: %w", context.Cause(parent))
	}
	var all []time.Duration
	var r Result
	for _, cr := range results {
		if cr.err != nil {
			return Result{}, fmt.Errorf("load: %w", cr.err)
		}
		all = append(all, cr.lat...)
		r.Bad += cr.bad
		if r.FirstBad == "" {
			r.FirstBad = cr.firstBad
		}
	}
	r.Requests = len(all)
	stop := stopAt
	if end.Before(stop) { // stopped by MaxRequests
		stop = lastEnd(results)
		if stop.Before(measureFrom) {
			stop = measureFrom
		}
	}
	r.Elapsed = stop.Sub(measureFrom)
	if r.Elapsed > 0 {
		r.ReqPerSec = float64(r.Requests) / r.Elapsed.Seconds()
	}
	r.Latency = lat.Summarize(all)
	return r, nil
}

func (cfg *Config) validate() error {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return fmt.Errorf("load: address %q: %w", cfg.Addr, err)
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil || !ip.IsLoopback():
		return fmt.Errorf("load: address %q: the host must be a loopback IP (such as 127.0.0.1)", cfg.Addr)
	case cfg.Conns < 1:
		return fmt.Errorf("load: %d connections, want at least 1", cfg.Conns)
	case cfg.Duration <= 0:
		return fmt.Errorf("load: duration %v, want > 0", cfg.Duration)
	case cfg.Warmup < 0 || cfg.MaxRequests < 0:
		return fmt.Errorf("load: warm-up %v and max requests %d must not be negative", cfg.Warmup, cfg.MaxRequests)
	case len(cfg.Path) == 0 || cfg.Path[0] != '/':
		return fmt.Errorf("load: path %q must start with /", cfg.Path)
	}
	return nil
}

// connResult is one connection's share of the run, written only by its
// goroutine.
type connResult struct {
	lat      []time.Duration
	bad      int
	firstBad string
	lastEnd  time.Time // end of its last measured request
	err      error
}

func lastEnd(rs []connResult) time.Time {
	var t time.Time
	for _, r := range rs {
		if r.lastEnd.After(t) {
			t = r.lastEnd
		}
	}
	return t
}

// drive runs one connection's closed loop until stopAt (or the budget is
// spent, or the connection fails). It measures the responses that complete
// in [measureFrom, stopAt].
func drive(c net.Conn, req []byte, cfg Config, measureFrom, stopAt time.Time, budget *atomic.Int64) (r connResult) {
	br := bufio.NewReaderSize(c, 16<<10)
	var body []byte
	for {
		t0 := time.Now()
		if !t0.Before(stopAt) {
			return r
		}
		if cfg.MaxRequests > 0 && !t0.Before(measureFrom) && budget.Add(-1) < 0 {
			return r
		}
		if _, err := c.Write(req); err != nil {
			r.err = ended(err, stopAt)
			return r
		}
		status, b, err := readResponse(br, body[:0])
		t1 := time.Now()
		if err != nil {
			r.err = ended(err, stopAt)
			return r
		}
		body = b
		measured := !t1.Before(measureFrom) && !t1.After(stopAt)
		problem := ""
		if status != 200 {
			problem = fmt.Sprintf("status %d: %q", status, bytes.TrimSpace(b))
		} else if cfg.Check != nil {
			if err := cfg.Check(b); err != nil {
				problem = err.Error()
			}
		}
		if !measured {
			continue
		}
		if problem != "" {
			r.bad++
			if r.firstBad == "" {
				r.firstBad = problem
			}
			continue
		}
		r.lat = append(r.lat, t1.Sub(t0))
		r.lastEnd = t1
	}
}

// ended returns nil for the error of a request cut off at the end of the
// measured time (a deadline passed after stopAt), else err.
func ended(err error, stopAt time.Time) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(stopAt) {
		return nil
	}
	return err
}

var errFraming = errors.New("response without a valid Content-Length (chunked or malformed)")

// readResponse reads one response with a Content-Length and returns its
// status and body (appended to body).
func readResponse(br *bufio.Reader, body []byte) (int, []byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, body, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, body, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, body, fmt.Errorf("bad status line %q", line)
	}
	length := -1
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, body, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(name, []byte("Content-Length")) {
			length, err = strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || length < 0 {
				return 0, body, errFraming
			}
		}
	}
	if length < 0 {
		return 0, body, errFraming
	}
	n := len(body)
	body = slices.Grow(body, length)[:n+length]
	if _, err := io.ReadFull(br, body[n:]); err != nil {
		return 0, body, err
	}
	return status, body, nil
}
