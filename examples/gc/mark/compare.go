package mark

import (
	"fmt"
	"time"
)

// Round is one timed round of the three marks of one graph (see TimeRound).
type Round struct {
	Serial, Static, Stealing time.Duration
	// Stats is the stealing mark's (its Time is Stealing).
	Stats Stats
}

// TimeRound marks g three times into b: with MarkSerial, with MarkStatic on p
// goroutines and with m (at most p copies), timing each (bitmap clearing
// included) and checking each marked set against ref, the result of an earlier
// MarkSerial of g that marked want objects. It returns an error naming the
// first mark that differs, or MarkStatic's error. examples/mark and the perf
// harness's mark section call it once per round, so that drift in the
// machine's speed (other load, frequency) hits the three marks alike.
func TimeRound(g *Graph, ref, b *Bitmap, want int, m *Marker, p int) (Round, error) {
	var r Round
	check := func(kind string, n int) error {
		if obj, differ := ref.FirstDifference(b); differ {
			return fmt.Errorf("mark: %s mark differs from the serial reference at object %d", kind, obj)
		}
		if n != want {
			return fmt.Errorf("mark: %s mark counted %d objects; the serial reference marked %d", kind, n, want)
		}
		return nil
	}
	t0 := time.Now()
	n := MarkSerial(g, b)
	r.Serial = time.Since(t0)
	if err := check("serial", n); err != nil {
		return r, err
	}
	t0 = time.Now()
	n, err := MarkStatic(g, b, p)
	r.Static = time.Since(t0)
	if err != nil {
		return r, err
	}
	if err := check("static", n); err != nil {
		return r, err
	}
	r.Stats = m.Mark(g, b, p)
	r.Stealing = r.Stats.Time
	return r, check("stealing", r.Stats.Marked)
}
