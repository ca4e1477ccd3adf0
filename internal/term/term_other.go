//go:build !linux

package term

import "os"

// IsTerminal reports whether f is a character device, the closest
// portable test for a terminal (it also accepts /dev/null, where the
// rewritten progress line is thrown away anyway).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
