package bench

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"slices"
	"syscall"
	"time"

	"github.com/workgang/workgang/examples/internal/lat"
	"github.com/workgang/workgang/examples/pow/pow"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// Tail is the one-hash search's latency on a warm set (or a reference
// call's), with what happened around the slow calls: of the calls at or
// above the p99 (Slow), how many saw a GC cycle end, woke a parked worker,
// had a goroutine block on a sync.Mutex, took a page fault, or had the
// process preempted by the OS (an involuntary context switch), and how many
// none of these; each call is counted once, in that order.
type Tail struct {
	Solver string      `json:"solver"`
	Lat    lat.Summary `json:"latency"`
	P999   int64       `json:"p999_ns"`
	// AllocsPerCall is heap objects allocated per call (all calls).
	AllocsPerCall float64 `json:"allocs_per_call"`
	Slow          int     `json:"slow"`
	SlowGC        int     `json:"slow_gc"`
	SlowWakeup    int     `json:"slow_wakeup"`
	SlowMutex     int     `json:"slow_mutex"`
	SlowFault     int     `json:"slow_fault"`
	SlowPreempted int     `json:"slow_preempted"`
	SlowNone      int     `json:"slow_none"`
	// CleanP99 is the p99 of the calls that saw none of the five.
	CleanP99 int64 `json:"clean_p99_ns"`
	// WorkerCalls counts the calls in which a worker goroutine ran a copy
	// (in the others the caller ran every copy), SlowWorker those among
	// the slow calls; both 0 without a set.
	WorkerCalls int `json:"worker_calls"`
	SlowWorker  int `json:"slow_worker"`
	// FaultCalls counts the calls that took a page fault, over all.
	FaultCalls int `json:"fault_calls"`
}

// probe is one kind of call the tail table measures.
type probe struct {
	name string
	set  bool // needs a warm set
	// call returns the function to time, on w (nil without a set).
	call func(w *workers.Workers) func() error
}

// probes are the one-hash searches of every solver, then reference calls
// that take the search out (an empty RunContext and RunN, and the context
// allocation RunContext makes, alone).
func probes(copies int) []probe {
	var ps []probe
	p := pow.NewPuzzle(1, 0)
	for _, k := range kinds(copies) {
		ps = append(ps, probe{name: k.name, set: k.set, call: func(w *workers.Workers) func() error {
			s := k.make_(w)
			return func() error { _, err := solve(s, p); return err }
		}})
	}
	bg := context.Background()
	empty := tasks.CallerRuns(tasks.Func("empty", func(int) {}))
	return append(ps,
		probe{name: "ref: RunContext, empty", set: true, call: func(w *workers.Workers) func() error {
			fn := func(context.Context, int) error { return nil }
			return func() error { return w.RunContext(bg, copies, fn) }
		}},
		probe{name: "ref: RunN caller-runs, empty", set: true, call: func(w *workers.Workers) func() error {
			return func() error { w.RunN(empty, copies); return nil }
		}},
		probe{name: "ref: WithCancelCause+cancel", call: func(*workers.Workers) func() error {
			return func() error {
				ctx, cancel := context.WithCancelCause(bg)
				cancel(nil)
				if ctx.Err() == nil {
					return errors.New("pow: a cancelled context reports no error")
				}
				return nil
			}
		}},
	)
}

// OneHash measures the difficulty-0 search (every copy's first hash solves
// it) and the reference calls, calls times each, the split ones with copies
// copies on a set whose workers were created beforehand. It reads the
// counters outside the timed region of every call.
func OneHash(copies, calls int) ([]Tail, error) {
	var out []Tail
	for _, pr := range probes(copies) {
		var w *workers.Workers
		if pr.set {
			w = workers.New("pow-onehash", copies)
			w.SetActiveWorkers(copies)
		}
		t, err := tail(pr.call(w), w, calls)
		if w != nil {
			w.Close()
		}
		if err != nil {
			return nil, err
		}
		t.Solver = pr.name
		out = append(out, t)
	}
	return out, nil
}

// counters are what the tail analysis reads between calls.
type counters struct {
	gc, allocs             uint64
	mutexWait              float64
	wakeups, workerCopies  uint64
	minorFaults, preempted int64
}

var counterNames = []metrics.Sample{
	{Name: "/gc/cycles/total:gc-cycles"},
	{Name: "/gc/heap/allocs:objects"},
	{Name: "/sync/mutex/wait/total:seconds"},
}

// read fills c. It allocates nothing (metrics.Read into a reused slice,
// Stats by value, getrusage into a stack value), so the allocation count
// between two reads is the call's.
func (c *counters) read(sample []metrics.Sample, w *workers.Workers) {
	metrics.Read(sample)
	c.gc, c.allocs, c.mutexWait = sample[0].Value.Uint64(), sample[1].Value.Uint64(), sample[2].Value.Float64()
	if w != nil {
		st := w.Stats()
		c.wakeups, c.workerCopies = st.Wakeups, st.WorkerCopies
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.minorFaults, c.preempted = int64(ru.Minflt), int64(ru.Nivcsw)
	}
}

type callInfo struct {
	d                                 time.Duration
	gc, wake, mutex, fault, preempted bool
	worker                            bool // a worker ran a copy
}

func tail(call func() error, w *workers.Workers, calls int) (Tail, error) {
	sample := slices.Clone(counterNames)
	for range min(calls, 1000) { // warm up
		if err := call(); err != nil {
			return Tail{}, err
		}
	}
	runtime.GC()
	info := make([]callInfo, 0, calls)
	var c0, c1 counters
	c0.read(sample, w)
	firstAllocs := c0.allocs
	for range calls {
		t0 := time.Now()
		err := call()
		d := time.Since(t0)
		if err != nil {
			return Tail{}, err
		}
		c1.read(sample, w)
		info = append(info, callInfo{d: d, gc: c1.gc != c0.gc, wake: c1.wakeups != c0.wakeups, mutex: c1.mutexWait != c0.mutexWait,
			fault: c1.minorFaults != c0.minorFaults, preempted: c1.preempted != c0.preempted, worker: c1.workerCopies != c0.workerCopies})
		c0 = c1
	}
	var t Tail
	ds := make([]time.Duration, len(info))
	for i, c := range info {
		ds[i] = c.d
	}
	t.Lat = lat.Summarize(ds) // sorts ds
	t.P999 = int64(lat.Percentile(ds, 99.9))
	t.AllocsPerCall = float64(c1.allocs-firstAllocs) / float64(calls)
	var clean []time.Duration
	for _, c := range info {
		if c.worker {
			t.WorkerCalls++
		}
		if c.fault {
			t.FaultCalls++
		}
		if !c.gc && !c.wake && !c.mutex && !c.fault && !c.preempted {
			clean = append(clean, c.d)
		}
		if c.d < t.Lat.P99 {
			continue
		}
		t.Slow++
		if c.worker {
			t.SlowWorker++
		}
		switch {
		case c.gc:
			t.SlowGC++
		case c.wake:
			t.SlowWakeup++
		case c.mutex:
			t.SlowMutex++
		case c.fault:
			t.SlowFault++
		case c.preempted:
			t.SlowPreempted++
		default:
			t.SlowNone++
		}
	}
	if len(clean) > 0 {
		slices.Sort(clean)
		t.CleanP99 = int64(lat.Percentile(clean, 99))
	}
	return t, nil
}
