package load

import (
	"bytes"
	"math"
	"os"
	"runtime/metrics"
	"syscall"
)

// The readings' state; one refresh at a time (the package doc).
var load struct {
	fd      int // /proc/loadavg, opened once; -1 where it cannot be
	opened  bool
	cpus    int // CPUs online (others run on all of them), read once; 0 if unknown
	crowded hysteresis
	running [2]metrics.Sample // fields, so that a refresh allocates nothing
	buf     [128]byte
}

// OthersWaiting reports whether other processes' runnable threads plus this
// process's procs exceed the CPUs online. The kernel's runnable count (the
// fourth field of /proc/loadavg) includes our threads, counted as our running
// and runnable goroutines (ourRunning), read before and after it (the
// smaller kept).
func OthersWaiting(procs int) bool {
	if !load.opened {
		load.opened, load.fd = true, -1
		if fd, err := syscall.Open("/proc/loadavg", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
			load.fd = fd
		}
		load.cpus = onlineCPUs()
		load.running[0].Name = "/sched/goroutines/running:goroutines"
		load.running[1].Name = "/sched/goroutines/runnable:goroutines"
	}
	if load.fd < 0 || load.cpus < 1 {
		return false
	}
	ours := ourRunning(procs)
	read := func(buf []byte) (int, error) { return syscall.Pread(load.fd, buf, 0) }
	runnable, ok := leastRunnable(read, load.buf[:], load.cpus-procs+ours)
	return ok && crowdedBy(runnable, min(ours, ourRunning(procs)), procs, load.cpus, &load.crowded)
}

// The runtime's own threads come and go: one looking for work lasts about a
// reading, and an idle VM shows one at about every other reading, where a
// busy process's thread is there at nearly every one. So a refresh keeps the
// least of up to kernelReadings readings (TestLeastRunnable), and
// othersReadings busy refreshes in a row turn the answer on, freeReadings
// free ones off (TestCrowdedByHysteresis).
const (
	kernelReadings = 3
	othersReadings = 8
	freeReadings   = 3
)

// leastRunnable returns the least runnable count of up to kernelReadings
// reads into buf, stopping at free or less; false if a read fails.
func leastRunnable(read func(buf []byte) (int, error), buf []byte, free int) (least int, ok bool) {
	least = math.MaxInt
	for i := 0; i < kernelReadings && least > free; i++ {
		n, err := read(buf)
		r, ok := runnableField(buf[:max(n, 0)])
		if err != nil || !ok {
			return 0, false
		}
		least = min(least, r)
	}
	return least, true
}

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

// ourRunning returns how many of this process's threads may be running Go
// code now: its running goroutines plus its runnable ones, at most procs
// (procs where the runtime does not tell, before go1.26). A runnable
// goroutine waits on a processor of ours whose thread runs the scheduler
// (a goroutine that yielded, in a spin loop) or for one that is busy: either
// way that thread is the kernel's runnable, and counting only running
// goroutines read our own spinners as other processes' threads.
func ourRunning(procs int) int {
	metrics.Read(load.running[:])
	run, queued := load.running[0].Value, load.running[1].Value
	if run.Kind() != metrics.KindUint64 || queued.Kind() != metrics.KindUint64 {
		return procs
	}
	return max(min(int(run.Uint64()+queued.Uint64()), procs), 1)
}

// runnableField parses the "running" of "running/total" in /proc/loadavg
// ("0.12 0.34 0.56 3/412 9876").
func runnableField(b []byte) (int, bool) {
	for range 3 {
		i := bytes.IndexByte(b, ' ')
		if i < 0 {
			return 0, false
		}
		b = b[i+1:]
	}
	v, i := 0, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int(b[i]-'0')
	}
	return v, i < len(b) && b[i] == '/'
}

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
