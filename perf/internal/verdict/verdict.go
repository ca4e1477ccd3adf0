// Package verdict holds what every section of the perf harness needs to
// state a result its reader can act on: which way a ratio is better, which
// speedups the machine cannot produce, and whether other programs competed
// for the processors while a section measured.
package verdict

import (
	"fmt"
	"io"
	"math"
	"runtime"
)

// The direction of a ratio, printed under every ratio column and after
// every ratio in a verdict.
const (
	Lower  = "lower is better"
	Higher = "higher is better"
)

// CPUs returns how many processors the harness's goroutines can run on at
// once: the lesser of the logical CPUs and GOMAXPROCS.
func CPUs() int { return min(runtime.NumCPU(), runtime.GOMAXPROCS(0)) }

// Impossible reports whether x, the speedup of n copies over running them
// one after another, is above what min(n, CPUs()) processors can give: such
// a figure is a measurement error (one of its two times was disturbed), not
// a result. It compares x as printed, to two decimals.
func Impossible(x float64, n int) bool {
	bound := CPUs()
	if n > 0 {
		bound = min(bound, n)
	}
	return math.Round(x*100)/100 > float64(bound)
}

// Mark is the sign a table puts after an impossible speedup; its footnote
// explains it.
const Mark = "!"

// Marker formats the speedups of one table and remembers whether it flagged
// any, so that the table's footnote is printed only when needed.
type Marker struct{ flagged bool }

// Speedup formats x, the speedup of n copies (n <= 0: as many as the
// machine has processors), with format, followed by Mark when it is
// impossible.
func (m *Marker) Speedup(format string, x float64, n int) string {
	s := fmt.Sprintf(format, x)
	if Impossible(x, n) {
		m.flagged = true
		s += Mark
	}
	return s
}

// Footnote explains Mark on w if the table flagged a speedup.
func (m *Marker) Footnote(w io.Writer) {
	if m.flagged {
		fmt.Fprintf(w, "%s: above the %d CPUs this run had, impossible: a measurement error (one of the two times was disturbed), not a result\n", Mark, CPUs())
	}
}

// Speedup says x, the speedup of n copies, in a verdict: "1.53x faster"
// style figures for a possible one, and an explicit measurement error for
// an impossible one.
func Speedup(x float64, n int) string {
	if Impossible(x, n) {
		return fmt.Sprintf("%.2fx (impossible on %d CPUs: a measurement error)", x, CPUs())
	}
	return fmt.Sprintf("%.2fx", x)
}

// Times says how a time a compares with a time b of the same thing, lower
// being better: "3.6x faster" or "1.2x slower".
func Times(a, b float64) string {
	switch {
	case a <= 0 || b <= 0:
		return "not comparable"
	case a <= b:
		return fmt.Sprintf("%.2fx faster", b/a)
	default:
		return fmt.Sprintf("%.2fx slower", a/b)
	}
}

// Tail is a time's median and 99th percentile, in one unit: what a verdict
// on timed runs judges, since a mechanism that wins at the median can lose
// at the tail.
type Tail struct{ P50, P99 float64 }

// Tails says how the times a of the implementation called name compare with
// the times b of other, lower being better, at the median and at the tail:
// "workgang p50 1.70x faster than serial, p99 2.80x slower than serial's
// p99".
func Tails(name string, a Tail, other string, b Tail) string {
	return fmt.Sprintf("%s p50 %s, p99 %s", name, than(a.P50, b.P50, other), than(a.P99, b.P99, other+"'s p99"))
}

// than says Times(a, b) against other: "1.70x faster than serial".
func than(a, b float64, other string) string {
	if a <= 0 || b <= 0 {
		return "not comparable with " + other
	}
	return Times(a, b) + " than " + other
}

// Col is a table column: its name and, for a ratio, which way is better
// (Lower or Higher; "" for a column that is not a ratio).
type Col struct{ Name, Better string }

// Plain, LowerCol and HigherCol make columns.
func Plain(name string) Col     { return Col{name, ""} }
func LowerCol(name string) Col  { return Col{name, Lower} }
func HigherCol(name string) Col { return Col{name, Higher} }

// Heading writes a table's header for a tabwriter: the column names, and,
// if any column is a ratio, a second line with its direction under it.
// terminated ends every cell with a tab (the tables aligned right), or
// leaves the last one open.
func Heading(w io.Writer, terminated bool, cols ...Col) {
	line := func(cell func(Col) string) {
		for i, c := range cols {
			fmt.Fprint(w, cell(c))
			if terminated || i < len(cols)-1 {
				fmt.Fprint(w, "\t")
			}
		}
		fmt.Fprintln(w)
	}
	line(func(c Col) string { return c.Name })
	for _, c := range cols {
		if c.Better != "" {
			line(func(c Col) string { return c.Better })
			return
		}
	}
}

// Print writes a section's verdict: what was compared, which is better and
// by how much, a line each.
func Print(w io.Writer, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "verdict:")
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// Withheld writes, in place of a verdict, why there is none.
func Withheld(w io.Writer, why string) {
	fmt.Fprintf(w, "verdict withheld: %s\n", why)
}
