package harness

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/workgang/workgang/internal/term"
)

// Progress timing: nothing is shown for the first progressDelay of a run (a
// short run stays silent); after that a terminal gets its line rewritten at
// most every progressTTY, and a file or pipe gets a new line at most every
// progressLog.
const (
	progressDelay = 3 * time.Second
	progressTTY   = 200 * time.Millisecond
	progressLog   = 5 * time.Second
)

// progress writes a status line to stderr during long runs. It is called
// between measurements, never inside a timed loop.
type progress struct {
	w     io.Writer
	tty   bool          // rewrite one line with \r instead of printing lines
	delay time.Duration // silence at the start of the run
	start time.Time
	last  time.Time // when the line was last written
	shown bool      // a \r line is on screen and must be cleared
}

// newProgress returns a progress reporter writing to w.
func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: isTerminal(w), delay: progressDelay, start: time.Now()}
}

// isTerminal reports whether w is a terminal (see term.IsTerminal): only then
// is the progress line rewritten in place with \r.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f)
}

// update shows the status format describes, if the run has been long enough
// and the previous line is old enough.
func (p *progress) update(format string, args ...any) {
	now := time.Now()
	every := progressLog
	if p.tty {
		every = progressTTY
	}
	if now.Sub(p.start) < p.delay || now.Sub(p.last) < every {
		return
	}
	p.last = now
	msg := fmt.Sprintf("perf %5.1fs: %s", now.Sub(p.start).Seconds(), fmt.Sprintf(format, args...))
	if p.tty {
		fmt.Fprintf(p.w, "\r%-79.79s", msg)
		p.shown = true
		return
	}
	fmt.Fprintln(p.w, msg)
}

// clear removes a status line from the terminal.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprintf(p.w, "\r%79s\r", "")
		p.shown = false
	}
}
