package verdict

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestImpossible checks the bound: the lesser of the copies and the CPUs,
// compared as printed.
func TestImpossible(t *testing.T) {
	c := float64(CPUs())
	tests := []struct {
		x    float64
		n    int
		want bool
	}{
		{c, 0, false},
		{c + 0.004, 0, false}, // prints as c
		{c + 0.01, 0, true},
		{1.5, 1, true}, // one copy cannot be sped up
		{1, 1, false},
		{c + 1, 1000, true},
	}
	for _, tt := range tests {
		if got := Impossible(tt.x, tt.n); got != tt.want {
			t.Errorf("Impossible(%v, %d) on %v CPUs: got %v; want %v", tt.x, tt.n, c, got, tt.want)
		}
	}
}

// TestMarker checks that an impossible speedup is marked and footnoted, and
// that a table without one gets no footnote.
func TestMarker(t *testing.T) {
	var m Marker
	var b bytes.Buffer
	if got := m.Speedup("%.2f", 0.5, 2); got != "0.50" {
		t.Errorf("possible: got %q; want 0.50", got)
	}
	m.Footnote(&b)
	if b.Len() != 0 {
		t.Errorf("footnote without a mark: %q", b.String())
	}
	if got := m.Speedup("%.2fx", 1.5, 1); got != "1.50x"+Mark {
		t.Errorf("impossible: got %q; want 1.50x%s", got, Mark)
	}
	m.Footnote(&b)
	if !strings.Contains(b.String(), "impossible") {
		t.Errorf("footnote: got %q; want it to say impossible", b.String())
	}
	if got := Speedup(1.5, 1); !strings.Contains(got, "measurement error") {
		t.Errorf("Speedup(1.5, 1): got %q; want a measurement error", got)
	}
}

// TestHeading checks the direction line under the ratio columns, and none
// without ratio columns.
func TestHeading(t *testing.T) {
	var b bytes.Buffer
	Heading(&b, true, Plain("a"), LowerCol("b"), HigherCol("c"))
	if got, want := b.String(), "a\tb\tc\t\n\t"+Lower+"\t"+Higher+"\t\n"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	b.Reset()
	Heading(&b, false, Plain("a"), Plain("b"))
	if got, want := b.String(), "a\tb\n"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}

// TestLoadWarning checks the threshold of other programs' CPU use.
func TestLoadWarning(t *testing.T) {
	n := float64(runtime.NumCPU())
	if w := LoadWarning(0, true); w != "" {
		t.Errorf("idle: got %q; want none", w)
	}
	if w := LoadWarning(n, false); w != "" {
		t.Errorf("unknown: got %q; want none", w)
	}
	if w := LoadWarning(n, true); !strings.Contains(w, "other programs used") {
		t.Errorf("every CPU busy: got %q; want a warning", w)
	}
	if _, ok := Start().Others(); !ok {
		t.Log("this system cannot tell other programs' CPU use")
	}
}

// TestTails checks that a verdict on timed runs judges the median and the
// tail separately: faster at p50 and slower at p99 says both, and a missing
// figure is not compared.
func TestTails(t *testing.T) {
	tests := []struct {
		a, b Tail
		want string
	}{
		{Tail{100, 280}, Tail{170, 100}, "workgang p50 1.70x faster than serial, p99 2.80x slower than serial's p99"},
		{Tail{100, 100}, Tail{150, 300}, "workgang p50 1.50x faster than serial, p99 3.00x faster than serial's p99"},
		{Tail{200, 90}, Tail{100, 100}, "workgang p50 2.00x slower than serial, p99 1.11x faster than serial's p99"},
		{Tail{100, 0}, Tail{100, 100}, "workgang p50 1.00x faster than serial, p99 not comparable with serial's p99"},
	}
	for _, tt := range tests {
		if got := Tails("workgang", tt.a, "serial", tt.b); got != tt.want {
			t.Errorf("Tails(%v, %v):\ngot  %q\nwant %q", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestTitleNote checks the note a plot's title carries when the verdict was
// withheld: the share of the CPUs other programs used.
func TestTitleNote(t *testing.T) {
	n := float64(runtime.NumCPU())
	if got, want := TitleNote(0.4*n), "(verdict withheld: other programs used 40% of the CPUs)"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}
