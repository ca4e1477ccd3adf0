//go:build unix

package verdict

import (
	"syscall"
	"time"
)

// ownCPU returns the CPU time this process and its waited-for children
// (the openmp section's C processes) have used.
func ownCPU() (time.Duration, bool) {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return 0, false
	}
	var d time.Duration
	for _, ru := range []*syscall.Rusage{&self, &kids} {
		d += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return d, true
}
