//go:build linux

package slots_test

import (
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	threadCPU = func() (time.Duration, bool) {
		var ts unix.Timespec
		if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
			return 0, false
		}
		return time.Duration(ts.Nano()), true
	}
}
