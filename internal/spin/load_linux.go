package spin

import (
	"runtime/metrics"
	"syscall"

	"golang.org/x/sys/unix"
)

// The machine's side of the processor view (hint Load), on Linux. Everything
// here runs inside refresh, one goroutine at a time (the CAS on
// view.refreshing orders successive refreshers), so its state needs no
// atomics.
var load struct {
	fd     int // /proc/loadavg, opened once; -1 where it cannot be
	opened bool
	cpus   int // CPUs online, read once
	// crowded is the answer and the readings in a row behind it.
	crowded hysteresis
	// running is the sample ourRunning reads, buf the one /proc/loadavg is
	// read into: fields, so that a refresh allocates nothing.
	running [1]metrics.Sample
	buf     [128]byte
}

// allowedCPUs returns the number of CPUs the calling thread may run on (the
// process's affinity mask, as taskset or a cpuset sets it), or 0 if unknown.
func allowedCPUs() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return 0
	}
	return set.Count()
}

// othersWaiting reports whether spinning would take a CPU from a thread that
// wants one: whether the threads of other processes that are runnable, plus
// this process's processors, exceed the machine's CPUs. The kernel's count of
// runnable threads (the fourth field of /proc/loadavg, "running/total", read
// at the instant) includes this process's own; those are the processors
// running Go code at the same instant (ourRunning), read from the runtime
// rather than assumed: counting all procs as ours would let a process that
// runs on fewer threads because the machine is busy (a loop inline, its
// workers parked) see the machine free, start its workers, see it busy
// again, and so on. The runtime's own threads that run no goroutine (one
// looking for work, one waking from a sleep) are counted as others' then;
// they come and go, so a refresh keeps the least of kernelReadings readings,
// and the answer turns to contended only after othersReadings busy
// refreshes in a row, and back after freeReadings free ones: a thread
// passing through, ours or not, does not stop the spinning, a busy process
// does within othersReadings refreshes.
func othersWaiting(procs int) bool {
	if !load.opened {
		load.opened = true
		load.fd = -1
		if fd, err := syscall.Open("/proc/loadavg", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
			load.fd = fd
		}
		load.cpus = onlineCPUs()
		load.running[0].Name = "/sched/goroutines/running:goroutines"
	}
	if load.fd < 0 || load.cpus < 1 {
		return false
	}
	// Our count is read on both sides of the kernel's and the smaller kept:
	// the runtime counts a goroutine as running for a while after its thread
	// stopped (parking, waiting for the scheduler's lock), and a larger
	// count would hide a busy process at such readings. A thread of ours
	// that starts running in between is counted as another's: a reading
	// now and then, which the hysteresis absorbs.
	ours := ourRunning(procs)
	runnable, ok := leastRunnable(func(buf []byte) (int, error) { return syscall.Pread(load.fd, buf, 0) }, load.buf[:], load.cpus-procs+ours)
	if !ok {
		return false
	}
	ours = min(ours, ourRunning(procs))
	return crowdedBy(runnable, ours, procs, load.cpus, &load.crowded)
}

// kernelReadings is how many times in a row a refresh reads the kernel's
// count, keeping the least: the runtime's threads that run no goroutine
// (one looking for work after a goroutine was readied) last microseconds,
// about as long as a reading, so they are rarely there at all of them; a
// busy process's thread is. Read once, a fork-join program's idle 2-vCPU VM
// looked busy at half of the refreshes that follow a join (perf/gate:
// forkjoin-gap), and often enough in a row to pass the hysteresis.
const kernelReadings = 3

// leastRunnable reads /proc/loadavg up to kernelReadings times through read
// (a pread of the whole file into buf) and returns the least runnable count,
// stopping at a count of free or less (a free reading: no later one can
// make the least busy); false if a reading fails.
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

// othersReadings is how many refreshes in a row must see another process's
// thread runnable before the view says so, and freeReadings how many in a
// row must see none before it stops saying so. A Go program that sleeps and
// wakes (a server, phases with gaps) has a runtime thread runnable without a
// goroutine at about every other reading on an idle 2-vCPU VM; a burning
// process is there at nearly every one, missed at a reading now and then
// (perf/gate: mixed, contended-*; perf -scenario contended).
const (
	othersReadings = 8
	freeReadings   = 3
)

// crowdedBy is othersWaiting's arithmetic: runnable threads on the machine,
// ours of them this process's, procs processors it may use, cpus online. A
// reading is busy when the other processes' runnable threads, added to our
// processors, exceed the CPUs; h keeps the answer with its hysteresis.
func crowdedBy(runnable, ours, procs, cpus int, h *hysteresis) bool {
	busy := max(runnable-ours, 0)+procs > cpus
	switch {
	case busy:
		h.busy, h.free = h.busy+1, 0
		if h.busy >= othersReadings {
			h.on = true
		}
	default:
		h.busy, h.free = 0, h.free+1
		if h.free >= freeReadings {
			h.on = false
		}
	}
	return h.on
}

// hysteresis is the contended answer and the busy and free readings in a
// row behind it.
type hysteresis struct {
	on         bool
	busy, free int
}

// ourRunning returns how many of this process's processors run Go code now
// (the runtime's count of running goroutines; it includes the caller), or
// procs where the runtime does not tell (before Go 1.26). Reading it takes
// the scheduler's lock once, as reading GOMAXPROCS does.
func ourRunning(procs int) int {
	running := &load.running[0]
	metrics.Read(load.running[:])
	if running.Value.Kind() != metrics.KindUint64 {
		return procs
	}
	return max(int(running.Value.Uint64()), 1)
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

// onlineCPUs returns the number of CPUs online (not only those the process
// may use: other processes' threads run on all of them), or 0.
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
	flush := func() {
		if !have {
			return
		}
		if inRange {
			count += v - lo + 1
		} else {
			count++
		}
		v, inRange, have = 0, false, false
	}
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v, have = v*10+int(c-'0'), true
		case c == '-':
			lo, v, inRange = v, 0, true
		case c == ',' || c == '\n':
			flush()
		}
	}
	flush()
	return count
}
