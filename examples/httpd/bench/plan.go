package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Plan is a whole measurement: every variant at every connection count, in
// rounds.
type Plan struct {
	Variants []string
	Conns    []int
	Load     Load // the load of every level; its Conns is ignored
	// Rounds measures every level this many times (at least once), the
	// variants interleaved within a round so that machine noise hits them
	// alike; each row is the round with the median req/s.
	Rounds int
	// WarmupPerConn and DurationPerConn stretch the warm-up and the
	// measured time at high counts, to at least this much per connection:
	// a request waits for the c-1 before it, and every connection should
	// complete requests in the window. Not applied with MaxRequests.
	WarmupPerConn, DurationPerConn time.Duration
	// Progress, if not nil, is told what is being measured.
	Progress func(format string, args ...any)
}

// LoadAt returns the plan's load for c connections.
func (p *Plan) LoadAt(c int) Load {
	l := p.Load
	l.Conns = c
	if l.MaxRequests == 0 {
		l.Warmup = max(l.Warmup, time.Duration(c)*p.WarmupPerConn)
		l.Duration = max(l.Duration, time.Duration(c)*p.DurationPerConn)
	}
	return l
}

// Run measures the plan: one row per count and variant, in that order.
func (s *Server) Run(ctx context.Context, p Plan) ([]Row, error) {
	for _, v := range p.Variants {
		if !slices.Contains(s.Variants, v) {
			return nil, fmt.Errorf("httpd: unknown variant %q (have %v)", v, s.Variants)
		}
	}
	rounds := max(1, p.Rounds)
	var rows []Row
	for _, c := range p.Conns {
		l := p.LoadAt(c)
		byVariant := map[string][]Row{}
		for round := range rounds {
			for _, v := range p.Variants {
				if p.Progress != nil {
					p.Progress("httpd: c=%d %s, round %d of %d", c, v, round+1, rounds)
				}
				r, err := s.Measure(ctx, v, l)
				if err != nil {
					return nil, err
				}
				byVariant[v] = append(byVariant[v], r)
			}
		}
		for _, v := range p.Variants {
			rs := byVariant[v]
			slices.SortStableFunc(rs, func(a, b Row) int { return cmp.Compare(a.ReqPerSec, b.ReqPerSec) })
			rows = append(rows, rs[(len(rs)-1)/2])
		}
	}
	return rows, nil
}
