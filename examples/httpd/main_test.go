package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// small is a quick run: a small index, two load levels, short levels.
var small = []string{"-docs", "20", "-dim", "4", "-c", "1,3", "-d", "10s", "-requests", "20", "-warmup", "0s", "-sets", "1,2"}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		out     string // in stdout
		errText string // in stderr
	}{
		{"help", []string{"-h"}, 0, "", "Usage of httpd"},
		{"bad flag", []string{"-nope"}, 2, "", "flag provided but not defined"},
		{"bad c", []string{"-c", "0"}, 2, "", `httpd: -c "0": want a comma list of integers >= 1`},
		{"bad rounds", []string{"-rounds", "0"}, 2, "", "-rounds 0"},
		{"not loopback", []string{"-addr", "0.0.0.0:0"}, 2, "", "want a loopback IP"},
		{"bad k", append([]string{"-k", "0"}, small...), 1, "", "httpd: k = 0 out of range [1, 100]"},
		{"bad variant", append([]string{"-variants", "serial,nope"}, small...), 2, "", `httpd: unknown variant "nope"`},
		{"small", small, 0, "best workgang", ""},
		{"some variants", append([]string{"-variants", "serial,set2"}, small...), 0, "set2", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &errw, nil), errw.String())
			assert.Contains(t, out.String(), tc.out)
			assert.Contains(t, errw.String(), tc.errText)
		})
	}
}

// TestTable checks that every variant was measured at every level, with
// the requested number of requests (whose bodies Measure checked against the serial searcher's).
func TestTable(t *testing.T) {
	var out, errw bytes.Buffer
	require.Equal(t, 0, run(small, &out, &errw, nil), errw.String())
	variants := []string{"serial", "errgroup", "set1", "ctx1", "try1", "fifo1", "set2", "ctx2", "try2", "fifo2"}
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 10 && (f[0] == "1" || f[0] == "3") {
			assert.Contains(t, variants, f[1])
			assert.Equal(t, "20", f[9], "requests of %s", line)
			rows++
		}
	}
	assert.Equal(t, 2*len(variants), rows, out.String())
}

// TestServe serves and fetches every variant's URL, as wrk would.
func TestServe(t *testing.T) {
	ready := make(chan string, 1)
	var out, errw bytes.Buffer
	var wg sync.WaitGroup
	code := -1
	wg.Add(1)
	go func() {
		defer wg.Done()
		code = run([]string{"-serve", "-serve-for", "2s", "-docs", "10", "-sets", "2"}, &out, &errw, ready)
	}()
	addr := <-ready
	var bodies []string
	for _, v := range []string{"serial", "errgroup", "set2", "ctx2", "try2", "fifo2"} {
		resp, err := http.Get("http://" + addr + "/search/" + v + "?q=scatter+gather&k=10")
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode, v)
		assert.Equal(t, 10, strings.Count(string(b), "\n"), v)
		bodies = append(bodies, string(b))
	}
	for _, b := range bodies[1:] {
		assert.Equal(t, bodies[0], b, "every variant returns the serial searcher's hits")
	}
	http.DefaultClient.CloseIdleConnections()
	wg.Wait()
	assert.Equal(t, 0, code, errw.String())
	assert.Contains(t, out.String(), "wrk -t 2 -c 256 -d 5s --latency 'http://"+addr+"/search/serial?q=scatter+gather&k=10'")
}
