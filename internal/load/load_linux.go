package load

import (
	"os"
	"runtime/metrics"
	"syscall"
)

// The state of the readings; one refresh at a time (the package doc).
var load struct {
	fd      int // /proc/loadavg, opened once; -1 where it cannot be
	opened  bool
	cpus    int // CPUs online, read once
	crowded hysteresis
	running [1]metrics.Sample // fields, so that a refresh allocates nothing
	buf     [128]byte
}

// OthersWaiting reports whether other processes' runnable threads plus this
// process's procs exceed the CPUs online. The kernel's runnable count (the
// fourth field of /proc/loadavg) includes our running goroutines, read before
// and after it (the smaller kept). The runtime's own threads come and go, so
// a refresh keeps the least of up to kernelReadings readings, and the answer
// changes only after a run of readings (hysteresis).
func OthersWaiting(procs int) bool {
	if !load.opened {
		load.opened, load.fd = true, -1
		if fd, err := syscall.Open("/proc/loadavg", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
			load.fd = fd
		}
		load.cpus = onlineCPUs()
		load.running[0].Name = "/sched/goroutines/running:goroutines"
	}
	if load.fd < 0 || load.cpus < 1 {
		return false
	}
	ours := ourRunning(procs)
	read := func(buf []byte) (int, error) { return syscall.Pread(load.fd, buf, 0) }
	runnable, ok := leastRunnable(read, load.buf[:], load.cpus-procs+ours)
	return ok && crowdedBy(runnable, min(ours, ourRunning(procs)), procs, load.cpus, &load.crowded)
}

// kernelReadings: a runtime thread looking for work lasts about as long as a
// reading, a busy process's thread is there at each (TestLeastRunnable).
const kernelReadings = 3

// leastRunnable returns the least runnable count of up to kernelReadings
// reads of /proc/loadavg into buf, stopping at free or less; false if a read
// fails.
func leastRunnable(read func(buf []byte) (int, error), buf []byte, free int) (least int, ok bool) {
	for i := 0; i < kernelReadings && (i == 0 || least > free); i++ {
		n, err := read(buf)
		if err != nil || n <= 0 {
			return 0, false
		}
		r, ok := runnableField(buf[:n])
		if !ok {
			return 0, false
		}
		if i == 0 || r < least {
			least = r
		}
	}
	return least, true
}

// othersReadings busy refreshes in a row turn the answer on, freeReadings
// free ones off: an idle VM shows a runtime thread at about every other
// reading, a burning process at nearly every one (TestCrowdedByHysteresis).
const (
	othersReadings = 8
	freeReadings   = 3
)

// crowdedBy is the arithmetic: runnable threads, ours of them this
// process's, procs processors it may use, cpus online.
func crowdedBy(runnable, ours, procs, cpus int, h *hysteresis) bool {
	if max(runnable-ours, 0)+procs > cpus {
		h.busy, h.free = h.busy+1, 0
		h.on = h.on || h.busy >= othersReadings
	} else {
		h.busy, h.free = 0, h.free+1
		h.on = h.on && h.free < freeReadings
	}
	return h.on
}

type hysteresis struct { // the answer, and the readings in a row behind it
	on         bool
	busy, free int
}

// ourRunning returns how many of this process's goroutines run now, or procs
// where the runtime does not tell (before go1.26).
func ourRunning(procs int) int {
	metrics.Read(load.running[:])
	if v := load.running[0].Value; v.Kind() == metrics.KindUint64 {
		return max(int(v.Uint64()), 1)
	}
	return procs
}

// runnableField parses the "running" of "running/total" in /proc/loadavg
// ("0.12 0.34 0.56 3/412 9876").
func runnableField(b []byte) (int, bool) {
	field := 0
	for i := 0; i < len(b); i++ {
		if b[i] == ' ' {
			field++
			continue
		}
		if field == 3 {
			v := 0
			for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
				v = v*10 + int(b[i]-'0')
			}
			return v, i < len(b) && b[i] == '/'
		}
	}
	return 0, false
}

// onlineCPUs returns the CPUs online (others run on all of them), 0 if
// unknown.
func onlineCPUs() int {
	b, _ := os.ReadFile("/sys/devices/system/cpu/online")
	return countCPUList(b)
}

// countCPUList counts the CPUs of a kernel CPU list such as "0-3,8,10-11".
func countCPUList(b []byte) int {
	count, lo, v, inRange, have := 0, 0, 0, false, false
	for _, c := range append(b, ',') {
		switch {
		case c >= '0' && c <= '9':
			v, have = v*10+int(c-'0'), true
		case c == '-':
			lo, v, inRange = v, 0, true
		case (c == ',' || c == '\n') && have:
			count++
			if inRange {
				count += v - lo
			}
			v, inRange, have = 0, false, false
		}
	}
	return count
}
