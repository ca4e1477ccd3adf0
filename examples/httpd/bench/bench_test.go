package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/examples/httpd/load"
	"github.com/workgang/workgang/examples/internal/lat"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func row(v string, c int, rps float64, p99 time.Duration) Row {
	return Row{Variant: v, Conns: c, Result: load.Result{ReqPerSec: rps, Latency: lat.Summary{P99: p99}}}
}

func TestBests(t *testing.T) {
	rows := []Row{
		row("serial", 1, 100, 50), row("errgroup", 1, 120, 40), row("set2", 1, 180, 30), row("try2", 1, 150, 20),
		row("serial", 16, 200, 500), row("errgroup", 16, 190, 400), row("set2", 16, 150, 900),
	}
	bs := Bests(rows)
	require.Len(t, bs, 2)
	assert.Equal(t, Best{Conns: 1, Workgang: "set2", WorkgangRPS: 180, Peer: "errgroup", PeerRPS: 120, VsPeer: 1.5, VsSerial: 1.8,
		WorkgangP99: 30, SerialP99: 50}, bs[0])
	assert.Equal(t, Best{Conns: 16, Workgang: "set2", WorkgangRPS: 150, Peer: "serial", PeerRPS: 200, VsPeer: 0.75, VsSerial: 0.75,
		WorkgangP99: 900, SerialP99: 500}, bs[1])
	var out bytes.Buffer
	PrintBests(&out, bs)
	assert.Equal(t, 3, strings.Count(out.String(), "\n"))
	out.Reset()
	PrintTable(&out, rows)
	assert.Contains(t, out.String(), "1.80x")
	assert.Equal(t, 1+len(rows), strings.Count(out.String(), "\n"))
}

func TestStartErrors(t *testing.T) {
	o := DefaultOptions()
	o.K = 0
	_, err := Start("127.0.0.1:0", o)
	assert.EqualError(t, err, "httpd: k = 0 out of range [1, 100]")
	o = DefaultOptions()
	o.Docs = 0
	_, err = Start("127.0.0.1:0", o)
	assert.EqualError(t, err, "httpd: shards 8, docs 0, dim 32: each must be at least 1")
	_, err = Start("127.0.0.1:-1", DefaultOptions())
	assert.ErrorContains(t, err, "httpd: listen tcp")
}

func TestMeasureChecksBodies(t *testing.T) {
	o := DefaultOptions()
	o.Docs, o.SetSizes = 10, []int{2, 2}
	s, err := Start("127.0.0.1:0", o)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []string{"serial", "errgroup", "set2", "ctx2", "try2", "fifo2"}, s.Variants, "sizes deduplicated")
	assert.Equal(t, s.Variants, s.Core, "no set of 1")
	r, err := s.Measure(context.Background(), "set2", Load{Conns: 2, Duration: time.Minute, MaxRequests: 8})
	require.NoError(t, err)
	assert.Equal(t, 8, r.Requests)
	s.want = append([]byte("x"), s.want...) // any difference is caught
	_, err = s.Measure(context.Background(), "serial", Load{Conns: 1, Duration: time.Minute, MaxRequests: 2})
	assert.ErrorContains(t, err, "httpd: serial at c=1: 2 bad responses, the first: body")
}

func TestCoreLeavesOutSetOfOneVariants(t *testing.T) {
	o := DefaultOptions()
	o.Docs, o.SetSizes = 10, []int{1, 3}
	s, err := Start("127.0.0.1:0", o)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []string{"serial", "errgroup", "set1", "ctx1", "try1", "fifo1", "set3", "ctx3", "try3", "fifo3"}, s.Variants)
	assert.Equal(t, []string{"serial", "errgroup", "set1", "set3", "ctx3", "try3", "fifo3"}, s.Core)
}

func TestPlan(t *testing.T) {
	p := Plan{Load: Load{Duration: 100 * time.Millisecond, Warmup: 10 * time.Millisecond}, WarmupPerConn: time.Millisecond, DurationPerConn: 2 * time.Millisecond}
	assert.Equal(t, Load{Conns: 4, Duration: 100 * time.Millisecond, Warmup: 10 * time.Millisecond}, p.LoadAt(4), "small counts keep the load")
	assert.Equal(t, Load{Conns: 100, Duration: 200 * time.Millisecond, Warmup: 100 * time.Millisecond}, p.LoadAt(100), "large counts stretch it")
	p.Load.MaxRequests = 5
	assert.Equal(t, Load{Conns: 100, Duration: 100 * time.Millisecond, Warmup: 10 * time.Millisecond, MaxRequests: 5}, p.LoadAt(100), "count-bounded: unchanged")

	o := DefaultOptions()
	o.Docs, o.SetSizes = 10, []int{2}
	s, err := Start("127.0.0.1:0", o)
	require.NoError(t, err)
	defer s.Close()
	var progress []string
	rows, err := s.Run(context.Background(), Plan{Variants: []string{"serial", "set2"}, Conns: []int{1, 2}, Rounds: 3,
		Load: Load{Duration: time.Minute, MaxRequests: 4}, Progress: func(f string, a ...any) { progress = append(progress, f) }})
	require.NoError(t, err)
	require.Len(t, rows, 4)
	for i, want := range []struct {
		v string
		c int
	}{{"serial", 1}, {"set2", 1}, {"serial", 2}, {"set2", 2}} {
		assert.Equal(t, want.v, rows[i].Variant)
		assert.Equal(t, want.c, rows[i].Conns)
		assert.Equal(t, 4, rows[i].Requests)
	}
	assert.Len(t, progress, 2*2*3, "levels x variants x rounds")
	_, err = s.Run(context.Background(), Plan{Variants: []string{"nope"}, Conns: []int{1}})
	assert.ErrorContains(t, err, `httpd: unknown variant "nope"`)
}
