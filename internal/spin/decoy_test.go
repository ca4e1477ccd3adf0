package spin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A lure readies a waiting decoy only with hint Lure on and more than one
// processor; Stop ends Serve, and a second Stop does nothing.
func TestDecoy(t *testing.T) {
	defer SetHints(SetHints(ParseHints("all")))
	for _, tc := range []struct {
		name  string
		hints Hint
		procs int
		want  bool
	}{
		{"hint on", ParseHints("all"), 2, true},
		{"hint off", ParseHints("-lure"), 2, false},
		{"one processor", ParseHints("all"), 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			SetHints(tc.hints)
			restore := ForceView(tc.procs, false)
			defer restore()
			d := NewDecoy()
			done := make(chan struct{})
			go func() { defer close(done); d.Serve() }()
			// The decoy may not wait in its receive yet: lure until it
			// took one, or for a while (a second when it should).
			wait := 50 * time.Millisecond
			if tc.want {
				wait = time.Second
			}
			for end := time.Now().Add(wait); d.Lured() == 0 && time.Now().Before(end); {
				d.Lure()
				time.Sleep(time.Millisecond)
			}
			assert.Equal(t, tc.want, d.Lured() > 0, "lured %d", d.Lured())
			d.Stop()
			d.Stop()
			<-done
			d.Lure() // a stopped decoy: nothing happens, nothing blocks
		})
	}
}
