package spin

import (
	"runtime/metrics"
	"syscall"
)

// The machine's side of the view (hint Load), on Linux: whether other
// processes' threads wait for the CPUs. Everything here runs inside a refresh,
// one goroutine at a time (the CAS on view.refreshing orders successive
// refreshers), so its state needs no atomics.
var load struct {
	fd      int // /proc/loadavg, opened once; -1 where it cannot be
	opened  bool
	cpus    int // CPUs online, read once
	crowded hysteresis
	running [1]metrics.Sample // ourRunning's sample; fields, so a refresh allocates nothing
	buf     [128]byte
}

// othersWaiting reports whether spinning would take a CPU from a thread that
// wants one: whether the runnable threads of other processes, plus this
// process's procs, exceed the CPUs online. The kernel's count of runnable
// threads (the fourth field of /proc/loadavg) includes ours; those are the
// goroutines running at the same instant (ourRunning), read on both sides of
// the kernel's reading, the smaller kept (the runtime counts a goroutine as
// running for a while after its thread stopped). The runtime's own threads
// that run no goroutine come and go, so a refresh keeps the least of up to
// kernelReadings readings, and the answer turns on only after othersReadings
// busy refreshes in a row and off after freeReadings free ones.
func othersWaiting(procs int) bool {
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
	if !ok {
		return false
	}
	return crowdedBy(runnable, min(ours, ourRunning(procs)), procs, load.cpus, &load.crowded)
}

// kernelReadings is how many times in a row a refresh reads the kernel's
// count, keeping the least: a runtime thread looking for work lasts about as
// long as a reading, a busy process's thread is there at every one
// (TestLeastRunnable; perf/gate's forkjoin-gap scenario).
const kernelReadings = 3

// leastRunnable reads /proc/loadavg up to kernelReadings times through read
// and returns the least runnable count, stopping at a count of free or less;
// false if a reading fails.
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
// free ones turn it off: a Go program that sleeps and wakes has a runtime
// thread runnable without a goroutine at about every other reading on an
// idle VM; a burning process is there at nearly every one
// (TestCrowdedByHysteresis; perf/gate's mixed and contended-* scenarios).
const (
	othersReadings = 8
	freeReadings   = 3
)

// crowdedBy is othersWaiting's arithmetic: runnable threads on the machine,
// ours of them this process's, procs processors it may use, cpus online.
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

// hysteresis is the answer and the busy and free readings in a row behind it.
type hysteresis struct {
	on         bool
	busy, free int
}

// ourRunning returns how many of this process's goroutines run now (it
// includes the caller), or procs where the runtime does not tell (before Go
// 1.26).
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

// onlineCPUs returns the number of CPUs online (other processes' threads run
// on all of them), or 0.
func onlineCPUs() int {
	fd, err := syscall.Open("/sys/devices/system/cpu/online", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer syscall.Close(fd)
	var buf [256]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return 0
	}
	return countCPUList(buf[:n])
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
		case c == ',' || c == '\n':
			if have && inRange {
				count += v - lo + 1
			} else if have {
				count++
			}
			v, inRange, have = 0, false, false
		}
	}
	return count
}
