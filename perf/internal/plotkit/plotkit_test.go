package plotkit

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBarsMarkNegativeAndCaption draws bars on a log axis with a value
// below zero, a whisker reaching below zero and a category without a bar:
// the file must be written (a log axis panics on a value at or below zero),
// mark both "<0" and carry every line of the caption.
func TestBarsMarkNegativeAndCaption(t *testing.T) {
	f := New("title", "x", "")
	ys := f.Categories([]string{"a", "b", "c"})
	bs := NewBarSet(3, 10)
	b := bs.Series("runtime", Styles["libgomp"].Color)
	b.Values[ys(0)], b.Lo[ys(0)], b.Hi[ys(0)] = -5, -9, -1
	b.Values[ys(1)], b.Lo[ys(1)], b.Hi[ys(1)] = 100, -3, 200
	b.Values[ys(2)] = math.NaN()
	bs.AddTo(f)
	LogAxis(&f.P.X, 10, 1000)
	path := filepath.Join(t.TempDir(), "f.svg")
	if err := Save(path, "machine line\ncommand line", f); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(raw)
	if got := strings.Count(svg, "&lt;0"); got != 2 {
		t.Errorf("got %d \"<0\" marks; want 2 (the negative bar and the whisker below zero)", got)
	}
	for _, want := range []string{"machine line", "command line", "runtime"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}
