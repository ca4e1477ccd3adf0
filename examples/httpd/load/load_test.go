package load

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server counts requests and answers "ok" with a Content-Length, or 500
// for /fail, or a chunked body for /chunked.
func server(t *testing.T, served *atomic.Int64) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "nope", 500)
		case "/chunked":
			w.Write([]byte("a"))
			w.(http.Flusher).Flush()
			w.Write([]byte("b"))
		default:
			w.Header().Set("Content-Length", "2")
			w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestRunCountsEveryRequest(t *testing.T) {
	var served atomic.Int64
	addr := server(t, &served)
	var checked atomic.Int64
	r, err := Run(context.Background(), Config{Addr: addr, Path: "/x", Conns: 4, Duration: 10 * time.Second, MaxRequests: 200,
		Check: func(b []byte) error {
			checked.Add(1)
			if string(b) != "ok" {
				return errors.New("bad body")
			}
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, 200, r.Requests, "MaxRequests bounds the count")
	assert.Equal(t, int64(200), served.Load(), "no warm-up: every request measured")
	assert.Equal(t, int64(200), checked.Load())
	assert.Zero(t, r.Bad)
	assert.Equal(t, 200, r.Latency.N)
	assert.Less(t, r.Elapsed, 10*time.Second, "stopped by the count, not the time")
	assert.Greater(t, r.ReqPerSec, 0.0)
	assert.LessOrEqual(t, r.Latency.P50, r.Latency.P99)
	assert.LessOrEqual(t, r.Latency.P99, r.Latency.Max)
}

func TestRunBoundedByTime(t *testing.T) {
	var served atomic.Int64
	addr := server(t, &served)
	start := time.Now()
	r, err := Run(context.Background(), Config{Addr: addr, Path: "/", Conns: 2, Duration: 50 * time.Millisecond, Warmup: 20 * time.Millisecond})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Greater(t, r.Requests, 0)
	assert.Less(t, int64(r.Requests), served.Load(), "warm-up requests are served but not counted")
	assert.InDelta(t, 50*time.Millisecond, r.Elapsed, float64(30*time.Millisecond))
}

func TestBadResponsesCounted(t *testing.T) {
	var served atomic.Int64
	addr := server(t, &served)
	r, err := Run(context.Background(), Config{Addr: addr, Path: "/fail", Conns: 1, Duration: time.Second, MaxRequests: 5})
	require.NoError(t, err)
	assert.Equal(t, 5, r.Bad)
	assert.Zero(t, r.Requests)
	assert.Contains(t, r.FirstBad, "status 500")
	r, err = Run(context.Background(), Config{Addr: addr, Path: "/x", Conns: 1, Duration: time.Second, MaxRequests: 3,
		Check: func([]byte) error { return errors.New("wrong") }})
	require.NoError(t, err)
	assert.Equal(t, 3, r.Bad)
	assert.Equal(t, "wrong", r.FirstBad)
}

func TestChunkedIsAnError(t *testing.T) {
	var served atomic.Int64
	addr := server(t, &served)
	_, err := Run(context.Background(), Config{Addr: addr, Path: "/chunked", Conns: 1, Duration: time.Second})
	assert.ErrorIs(t, err, errFraming)
}

func TestCancel(t *testing.T) {
	var served atomic.Int64
	addr := server(t, &served)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Config{Addr: addr, Path: "/", Conns: 3, Duration: time.Minute})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Addr: "10.0.0.1:80", Path: "/", Conns: 1, Duration: 1}, "the host must be a loopback IP"},
		{Config{Addr: "localhost:80", Path: "/", Conns: 1, Duration: 1}, "the host must be a loopback IP"},
		{Config{Addr: "127.0.0.1", Path: "/", Conns: 1, Duration: 1}, "missing port"},
		{Config{Addr: "127.0.0.1:1", Path: "/", Conns: 0, Duration: 1}, "0 connections"},
		{Config{Addr: "127.0.0.1:1", Path: "/", Conns: 1}, "duration 0s"},
		{Config{Addr: "127.0.0.1:1", Path: "x", Conns: 1, Duration: 1}, `path "x"`},
		{Config{Addr: "127.0.0.1:1", Path: "/", Conns: 1, Duration: 1, MaxRequests: -1}, "must not be negative"},
	} {
		_, err := Run(context.Background(), tc.cfg)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "load: "), err.Error())
		}
	}
}

// TestInFlightAbandonedAtTheEnd: requests still in flight when the measured
// time ends are not waited for and not counted, as in wrk.
func TestInFlightAbandonedAtTheEnd(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		<-release
	}))
	defer srv.Close()
	defer close(release) // before srv.Close: the handlers return, then Close waits for them
	r, err := Run(context.Background(), Config{Addr: strings.TrimPrefix(srv.URL, "http://"), Path: "/", Conns: 3, Duration: 50 * time.Millisecond})
	require.NoError(t, err)
	assert.Zero(t, r.Requests)
	assert.Zero(t, r.Bad)
	assert.Equal(t, 50*time.Millisecond, r.Elapsed)
	assert.Zero(t, r.ReqPerSec)
	assert.Positive(t, started.Load(), "the requests were sent")
}
