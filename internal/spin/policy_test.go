package spin

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Woke readies the policy's decoy when it waits (hint Lure, more than one
// processor); with the hint off, one processor, or nobody serving, a lure
// does nothing and never blocks; nor while other processes wait for the
// CPUs (hint Load), unless hint Load is off. Stop ends Serve, before or
// after it starts.
func TestWokeLuresTheDecoy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		procs     int
		contended bool
		hints     Hint
		want      bool
	}{
		{"lure on", 2, false, allHints, true},
		{"hint off", 2, false, allHints &^ Lure, false},
		{"one processor", 1, false, allHints, false},
		{"other processes wait for the CPUs", 2, true, allHints, false},
		{"contended, hint load off", 2, true, allHints &^ Load, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := withView(tc.procs, tc.contended, tc.hints)
			defer restore()
			p := NewPolicy()
			p.Woke() // nobody serves yet: does nothing, does not block
			done := make(chan struct{})
			go func() { defer close(done); p.Serve() }()
			for i := 0; i < 10000 && p.Lured() == 0; i++ {
				p.Woke()
				runtime.Gosched()
			}
			p.Stop()
			p.Stop() // idempotent
			<-done
			assert.Equal(t, tc.want, p.Lured() > 0, "lured %d times", p.Lured())
		})
	}
	p := NewPolicy()
	p.Stop()
	p.Serve() // stopped before it started: returns at once
}
