package spin

import "runtime/metrics"

// This process's side of the processor view (hint Load): goroutines of its
// own waiting for a processor. When they are many, a worker woken for a run
// waits in the run queues behind them, and a spinning waiter holds a
// processor one of them needs: to the set, the machine is as crowded as when
// other processes want the CPUs. Everything here runs inside refresh, one
// goroutine at a time, so its state needs no atomics.
var queued struct {
	sample [1]metrics.Sample // read into, so that a refresh allocates nothing
	named  bool
	last   int // the previous reading
}

// goroutinesQueued reports whether this process's runnable goroutines (the
// runtime's count of goroutines ready to run but not running), averaged over
// this refresh and the last, are at least as many as the processors (and at
// least two: a goroutine or two readied in passing, as a lone request's
// server and client are, must not count). It is false where the runtime
// does not count them (before Go 1.26).
func goroutinesQueued(procs int) bool {
	if !queued.named {
		queued.named = true
		queued.sample[0].Name = "/sched/goroutines/runnable:goroutines"
	}
	metrics.Read(queued.sample[:])
	if queued.sample[0].Value.Kind() != metrics.KindUint64 {
		return false
	}
	return queuedBy(int(queued.sample[0].Value.Uint64()), procs, &queued.last)
}

// queuedBy is goroutinesQueued's arithmetic: runnable goroutines now, procs
// processors; last is the previous reading, which it replaces.
func queuedBy(runnable, procs int, last *int) bool {
	avg := float64(runnable+*last) / 2
	*last = runnable
	return avg >= float64(max(2, procs))
}
