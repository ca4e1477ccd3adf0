package term

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal: it has terminal attributes
// (TCGETS succeeds). A character device such as /dev/null does not.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
