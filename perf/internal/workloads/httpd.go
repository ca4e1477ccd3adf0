package workloads

import (
	"context"
	"fmt"
	"time"

	"github.com/workgang/workgang/examples/httpd/bench"
	"github.com/workgang/workgang/perf/internal/harness"
)

// httpd section sizes: the connection counts of the seed's wrk runs, each
// level measured for a short time after a warm-up (both longer at high
// counts, see bench.Plan.LoadAt); by default the core variants (bench.Server.Core)
// once, under -long every variant for seconds, in three rounds (the
// variants interleaved, the median req/s kept); the harness's own tests
// (tiny) send a few requests per level at two small counts.
var (
	httpdConns     = []int{1, 16, 256, 1000}
	httpdTinyConns = []int{1, 4}
)

const (
	httpdDefaultD, httpdDefaultWarmup = 100 * time.Millisecond, 30 * time.Millisecond
	httpdDefaultRounds                = 1
	httpdQuickD, httpdQuickWarmup     = 60 * time.Millisecond, 20 * time.Millisecond
	httpdLongD, httpdLongWarmup       = 2 * time.Second, 500 * time.Millisecond
	httpdLongRounds                   = 3
	httpdTinyRequests                 = 10
	// At high connection counts the warm-up and the measured time grow
	// with c (bench.Plan.LoadAt).
	httpdWarmupPerConn   = 250 * time.Microsecond
	httpdDurationPerConn = 400 * time.Microsecond
)

// httpdResult is what the httpd section measured.
type httpdResult struct {
	Options bench.Options    `json:"options"`
	Rounds  int              `json:"rounds"`
	Rows    []bench.Row      `json:"rows"` // per level and variant, the round with the median req/s
	Bests   []bench.Best     `json:"bests"`
	Targets []harness.Target `json:"targets"`
}

// row returns the row of variant at conns connections, or nil.
func (r *httpdResult) row(variant string, conns int) *bench.Row {
	for i := range r.Rows {
		if r.Rows[i].Variant == variant && r.Rows[i].Conns == conns {
			return &r.Rows[i]
		}
	}
	return nil
}

// runHTTPD serves the httpd example's variants on a loopback port and
// drives each with the closed-loop load generator at every level, checking
// every response body against the serial searcher's.
func runHTTPD(h *harness.Harness) (any, error) {
	o := bench.DefaultOptions()
	conns, rounds, all := httpdConns, httpdDefaultRounds, false
	l := bench.Load{Duration: httpdDefaultD, Warmup: httpdDefaultWarmup}
	switch c := h.Cfg; {
	case c.Tiny():
		conns, rounds, l = httpdTinyConns, 1, bench.Load{Duration: time.Minute, MaxRequests: httpdTinyRequests}
		o.Docs = 50
	case c.Quick:
		l.Duration, l.Warmup, rounds = httpdQuickD, httpdQuickWarmup, 1
	case c.Long:
		l.Duration, l.Warmup, rounds, all = httpdLongD, httpdLongWarmup, httpdLongRounds, true
	}
	o.SetSizes = []int{1, 2, h.Cfg.Max}
	s, err := bench.Start("127.0.0.1:0", o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	fmt.Fprintf(h.Out, "%d shards x %d docs x %d dims per request, k=%d; %v per level after %v warm-up (at least %v and %v per connection), %d round(s); loopback, every body checked\n",
		o.Shards, o.Docs, o.Dim, o.K, l.Duration, l.Warmup, httpdDurationPerConn, httpdWarmupPerConn, rounds)
	variants := s.Core
	if all {
		variants = s.Variants
	}
	rows, err := s.Run(context.Background(), bench.Plan{Variants: variants, Conns: conns, Load: l, Rounds: rounds,
		WarmupPerConn: httpdWarmupPerConn, DurationPerConn: httpdDurationPerConn, Progress: h.Status})
	if err != nil {
		return nil, err
	}
	res := httpdResult{Options: o, Rounds: rounds, Rows: rows}
	h.ClearStatus()
	bench.PrintTable(h.Out, res.Rows)
	fmt.Fprintln(h.Out)
	res.Bests = bench.Bests(res.Rows)
	bench.PrintBests(h.Out, res.Bests)
	fmt.Fprintln(h.Out)
	res.Targets = httpdTargets(res.Bests)
	return &res, nil
}

// httpdTargets: the best workgang variant's req/s at least the best of
// serial and errgroup at every level and 1.5x serial's at c = 1, and its
// p99 at most serial's from c = 16 on.
func httpdTargets(bs []bench.Best) []harness.Target {
	var ts []harness.Target
	for _, b := range bs {
		detail := fmt.Sprintf("%s %.0f req/s, %s %.0f", b.Workgang, b.WorkgangRPS, b.Peer, b.PeerRPS)
		ts = append(ts, harness.RatioTarget(fmt.Sprintf("httpd c=%d: best workgang / best of serial, errgroup req/s", b.Conns), reasonHTTPD,
			b.WorkgangRPS, b.PeerRPS, 1, true, detail))
		if b.Conns == 1 {
			ts = append(ts, harness.RatioTarget("httpd c=1: best workgang / serial req/s", reasonHTTPD, b.VsSerial, 1, 1.5, true, detail))
		}
		if b.Conns >= 16 {
			ts = append(ts, harness.RatioTarget(fmt.Sprintf("httpd c=%d: best workgang p99 / serial p99", b.Conns), reasonHTTPD,
				float64(b.WorkgangP99), float64(b.SerialP99), 1, false,
				fmt.Sprintf("%s %.0f us, serial %.0f us", b.Workgang, float64(b.WorkgangP99)/1e3, float64(b.SerialP99)/1e3)))
		}
	}
	return ts
}
