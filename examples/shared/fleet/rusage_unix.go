//go:build unix

package fleet

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

type rusage struct {
	user, sys     time.Duration
	nvcsw, nivcsw int64
}

func getRusage() rusage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return rusage{}
	}
	return rusage{
		user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano()),
		nvcsw: int64(ru.Nvcsw), nivcsw: int64(ru.Nivcsw),
	}
}

// resetPeakRSS resets Linux's peak resident set (VmHWM) to the current one
// (writing 5 to clear_refs); elsewhere it does nothing.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns VmHWM in bytes, 0 if it cannot be read.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
