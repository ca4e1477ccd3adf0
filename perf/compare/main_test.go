package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestVerdict: a difference within the larger spread is the same; beyond
// it, the figure's direction decides.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		base, new, sb, sn float64
		higher            bool
		want              string
	}{
		{100, 105, 0.10, 0.02, false, "same (within spread)"}, // inside the base side's spread
		{100, 95, 0.02, 0.10, false, "same (within spread)"},  // inside the new side's spread
		{100, 110, 0.10, 0.10, false, "same (within spread)"}, // exactly the spread
		{100, 115, 0.10, 0.05, false, "worse"},                // a time went up
		{100, 85, 0.10, 0.05, false, "better"},                // a time went down
		{100, 115, 0.10, 0.05, true, "better"},                // a rate went up
		{100, 85, 0.10, 0.05, true, "worse"},                  // a rate went down
		{100, 101, 0, 0, false, "worse"},                      // no spread (one process): any difference
		{0, 100, 0, 0, false, "n/a"},                          // the base did not measure it
		{100, 0, 0, 0, true, "n/a"},
	} {
		got := verdict(tc.base, tc.new, tc.sb, tc.sn, tc.higher)
		assert.Equal(t, tc.want, got, "verdict(%v, %v, %v, %v, %v)", tc.base, tc.new, tc.sb, tc.sn, tc.higher)
	}
}

// fakeReport is a perf report whose pause p50 is p50 us and whose httpd
// best workgang variant serves rps req/s at one connection.
func fakeReport(t *testing.T, p50, rps float64) *report {
	t.Helper()
	doc := fmt.Sprintf(`{"header": {"cpu": "Test CPU", "logical_cpus": 2, "gomaxprocs": 2, "go_version": "go-test"},
	 "sections": {
	  "pause": {"impls": [{"impl": "serial", "p50_ns": 300000, "p99_ns": 350000},
	                      {"impl": "go+WaitGroup", "p50_ns": 280000, "p99_ns": 330000},
	                      {"impl": "workgang", "p50_ns": %g, "p99_ns": 250000}]},
	  "httpd": {"bests": [{"conns": 1, "workgang_rps": %g, "peer_rps": 9000}, {"conns": 256, "workgang_rps": 1, "peer_rps": 1}]}}}`, p50*1e3, rps)
	r := new(report)
	require.NoError(t, json.Unmarshal([]byte(doc), r))
	return r
}

// TestTable: the medians, ratio, spreads and verdicts of the rows, the
// peers beside them, and the printed table's header and lines.
func TestTable(t *testing.T) {
	sel, err := selectGroups("pause,httpd", false)
	require.NoError(t, err)
	base := []*report{fakeReport(t, 200, 10000), fakeReport(t, 210, 10100), fakeReport(t, 190, 9900)}
	cur := []*report{fakeReport(t, 100, 10000), fakeReport(t, 105, 10100), fakeReport(t, 95, 10000)}
	rows := table(sel, base, cur)
	require.Len(t, rows, 3) // pause p50 and p99, httpd c=1 (c=256 is not a figure)

	p50 := rows[0]
	assert.Equal(t, "pause p50", p50.Figure)
	assert.Equal(t, 200.0, p50.Base)
	assert.Equal(t, 100.0, p50.New)
	assert.InDelta(t, 0.5, p50.Ratio, 1e-9)
	assert.InDelta(t, 0.10, p50.BaseSpread, 1e-9) // (210 - 190) / 200
	assert.InDelta(t, 0.10, p50.NewSpread, 1e-9)  // (105 - 95) / 100
	assert.Equal(t, "better", p50.Verdict)
	assert.Equal(t, []named{{"go+WG", 280}, {"serial", 300}}, p50.Beside)

	assert.Equal(t, "same (within spread)", rows[1].Verdict) // p99 250 us on both sides
	assert.Equal(t, "httpd c=1, best workgang", rows[2].Figure)
	assert.True(t, rows[2].Higher)
	assert.Equal(t, "same (within spread)", rows[2].Verdict) // 10000 against 10000, spread 2%

	var out bytes.Buffer
	printTable(&out, Header{Date: "2026-01-02 03:04 UTC", CPU: "Test CPU", CPUs: 2, GOMAXPROCS: 2, Go: "go-test", Base: "v1 (abc1234)", New: "def5678", Runs: 3}, rows)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 6) // header, rule, column names, three rows
	for _, want := range []string{"base v1 (abc1234)", "new def5678", "Test CPU", "2 logical CPUs", "go-test", "3 processes per side", "2026-01-02 03:04 UTC"} {
		assert.Contains(t, lines[0], want)
	}
	assert.Regexp(t, `^pause p50 +us +lower +200 +100 +0\.50 +10% +10% +better +go\+WG 280, serial 300`, lines[3])
	assert.Regexp(t, `^httpd c=1, best workgang +req/s +higher +10000 +10000 +1\.00 +2% +1% +same \(within spread\) +best peer 9000`, lines[5])
}

// TestSelectGroups: contended only when asked for; unknown names fail.
func TestSelectGroups(t *testing.T) {
	names := func(gs []group) []string {
		var s []string
		for _, g := range gs {
			s = append(s, g.name)
		}
		return s
	}
	def, err := selectGroups("", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"pause", "pow", "empty", "grain", "httpd", "shared"}, names(def))
	full, err := selectGroups("", true)
	require.NoError(t, err)
	assert.Contains(t, names(full), "contended")
	only, err := selectGroups("contended, pow", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"pow", "contended"}, names(only))
	_, err = selectGroups("pause,nope", false)
	assert.ErrorContains(t, err, `unknown group "nope"`)
}
