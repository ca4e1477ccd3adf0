// Package bench runs the proof-of-work example's measurements: time per
// search (median and p99) for the serial search and the split ones, the
// first call against later calls (on a fresh set, with and without its
// workers created beforehand), and where the tail of a one-hash search
// comes from. Every nonce found is checked.
package bench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"syscall"
	"time"

	"github.com/workgang/workgang/examples/internal/lat"
	"github.com/workgang/workgang/examples/pow/pow"
	"github.com/workgang/workgang/workers"
)

// Options size the measurements.
type Options struct {
	Difficulty int           // of the timed searches (leading zero bits)
	Copies     int           // copies of every split search; also the sets' size
	Calls      int           // later calls per solver
	FirstCalls int           // first calls per solver (each on a fresh set)
	Gap        time.Duration // idle time before every first call
	OneHash    int           // calls of the one-hash search per solver
	Seed       uint64
}

// Row is one solver's times.
type Row struct {
	Solver string      `json:"solver"`
	Later  lat.Summary `json:"later"` // back-to-back calls on a warm set
	// First is the first call after Gap idle on a fresh set (workgang: New
	// included), FirstPre the same with the set's workers created by
	// SetActiveWorkers before the gap; for solvers without a set the two
	// are the same measurement.
	First    lat.Summary `json:"first"`
	FirstPre lat.Summary `json:"first_precreated"`
}

// solverKind makes a solver, on a fresh set when it needs one.
type solverKind struct {
	name  string
	make_ func(w *workers.Workers) pow.Solver // w is nil for solvers without a set
	set   bool
}

func kinds(copies int) []solverKind {
	return []solverKind{
		{name: "serial", make_: func(*workers.Workers) pow.Solver { return pow.Serial{} }},
		{name: "go+wg", make_: func(*workers.Workers) pow.Solver { return pow.GoWG{Copies: copies} }},
		{name: "errgroup", make_: func(*workers.Workers) pow.Solver { return pow.ErrGroup{Copies: copies} }},
		{name: "RunContext", set: true, make_: func(w *workers.Workers) pow.Solver {
			return pow.Context{Label: "RunContext", Set: w, Copies: copies}
		}},
		{name: "RunN+flag", set: true, make_: func(w *workers.Workers) pow.Solver {
			return pow.Flag{Label: "RunN+flag", Set: w, Copies: copies}
		}},
	}
}

// solve runs one search and checks its nonce.
func solve(s pow.Solver, p pow.Puzzle) (time.Duration, error) {
	t0 := time.Now()
	n, err := s.Solve(context.Background(), p)
	d := time.Since(t0)
	if err != nil {
		return d, fmt.Errorf("pow: %s: %w", s.Name(), err)
	}
	if !p.Solves(n) {
		return d, fmt.Errorf("pow: %s returned nonce %d, which has %d zero bits, want %d", s.Name(), n, p.ZeroBits(n), p.Difficulty)
	}
	return d, nil
}

// Measure times every solver: first calls, then later calls, interleaved
// per puzzle so that noise hits them alike.
func Measure(o Options) ([]Row, error) {
	if o.Copies < 1 || o.Copies > workers.MaxLimit || o.Calls < 1 || o.FirstCalls < 1 || o.OneHash < 0 || o.Gap < 0 {
		return nil, fmt.Errorf("pow: bad options %+v", o)
	}
	ks := kinds(o.Copies)
	rows := make([]Row, len(ks))
	first := make([][]time.Duration, len(ks))
	firstPre := make([][]time.Duration, len(ks))
	for i := range o.FirstCalls {
		p := pow.NewPuzzle(o.Seed+1_000_000+uint64(i), o.Difficulty)
		for j, k := range ks {
			for pre := range 2 {
				if pre == 1 && !k.set {
					continue
				}
				var w *workers.Workers
				if k.set && pre == 1 {
					w = workers.New("pow-"+k.name, o.Copies)
					w.SetActiveWorkers(o.Copies)
				}
				time.Sleep(o.Gap)
				t0 := time.Now()
				if k.set && pre == 0 {
					w = workers.New("pow-"+k.name, o.Copies)
				}
				_, err := solve(k.make_(w), p)
				d := time.Since(t0)
				if w != nil {
					w.Close()
				}
				if err != nil {
					return nil, err
				}
				if pre == 0 {
					first[j] = append(first[j], d)
				}
				if pre == 1 || !k.set {
					firstPre[j] = append(firstPre[j], d)
				}
			}
		}
	}
	sets := make([]*workers.Workers, len(ks))
	solvers := make([]pow.Solver, len(ks))
	for j, k := range ks {
		if k.set {
			sets[j] = workers.New("pow-"+k.name, o.Copies)
			defer sets[j].Close()
		}
		solvers[j] = k.make_(sets[j])
	}
	later := make([][]time.Duration, len(ks))
	for i := range o.Calls {
		p := pow.NewPuzzle(o.Seed+uint64(i), o.Difficulty)
		for j, s := range solvers {
			d, err := solve(s, p)
			if err != nil {
				return nil, err
			}
			later[j] = append(later[j], d)
		}
	}
	for j, k := range ks {
		rows[j] = Row{Solver: k.name, Later: lat.Summarize(later[j]), First: lat.Summarize(first[j]), FirstPre: lat.Summarize(firstPre[j])}
	}
	return rows, nil
}

// NewCost is the median time of workers.New plus Close for a set of n, and
// of New plus SetActiveWorkers(n) plus Close.
func NewCost(n, reps int) (newClose, newCreate time.Duration) {
	var a, b []time.Duration
	for range reps {
		t0 := time.Now()
		w := workers.New("pow-new", n)
		w.Close()
		a = append(a, time.Since(t0))
		t0 = time.Now()
		w = workers.New("pow-new", n)
		w.SetActiveWorkers(n)
		w.Close()
		b = append(b, time.Since(t0))
	}
	return lat.Summarize(a).P50, lat.Summarize(b).P50
}

// Tail is the one-hash search's latency on a warm set, with what happened
// around the slow calls: for the calls at or above the p99 (Slow), how many
// saw a GC cycle end, how many woke a parked worker, how many had the
// process preempted by the OS (an involuntary context switch) and how many
// none of these.
type Tail struct {
	Solver string      `json:"solver"`
	Lat    lat.Summary `json:"latency"`
	P999   int64       `json:"p999_ns"`
	// AllocsPerCall is heap objects allocated per call (all calls).
	AllocsPerCall float64 `json:"allocs_per_call"`
	Slow          int     `json:"slow"`
	SlowGC        int     `json:"slow_gc"`
	SlowWakeup    int     `json:"slow_wakeup"`
	SlowPreempted int     `json:"slow_preempted"`
	SlowNone      int     `json:"slow_none"`
	// CleanP99 is the p99 of the calls that saw none of the three.
	CleanP99 int64 `json:"clean_p99_ns"`
	// GCCycles, Wakeups and Preempted count calls that saw each, over all.
	GCCycles, Wakeups, Preempted int
}

// OneHash measures the difficulty-0 search (every copy's first hash solves
// it) calls times per solver, the split ones with copies copies. It reads
// the counters outside the timed region of every call.
func OneHash(copies, calls int) ([]Tail, error) {
	var out []Tail
	for _, k := range kinds(copies) {
		var w *workers.Workers
		if k.set {
			w = workers.New("pow-onehash", copies)
			w.SetActiveWorkers(copies)
		}
		t, err := oneHash(k.make_(w), w, calls)
		if w != nil {
			w.Close()
		}
		if err != nil {
			return nil, err
		}
		t.Solver = k.name
		out = append(out, t)
	}
	return out, nil
}

type callInfo struct {
	d                   time.Duration
	gc, wake, preempted bool
}

func oneHash(s pow.Solver, w *workers.Workers, calls int) (Tail, error) {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:objects"}}
	read := func() (gc, allocs uint64, wake uint64, nivcsw int64) {
		metrics.Read(sample)
		if w != nil {
			wake = w.Stats().Wakeups
		}
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return sample[0].Value.Uint64(), sample[1].Value.Uint64(), wake, int64(ru.Nivcsw)
	}
	p := pow.NewPuzzle(1, 0)
	for range min(calls, 1000) { // warm up
		if _, err := solve(s, p); err != nil {
			return Tail{}, err
		}
	}
	runtime.GC()
	info := make([]callInfo, 0, calls)
	gc0, allocs0, wake0, cs0 := read()
	firstAllocs := allocs0
	var lastAllocs uint64
	for range calls {
		d, err := solve(s, p)
		if err != nil {
			return Tail{}, err
		}
		gc1, allocs1, wake1, cs1 := read()
		info = append(info, callInfo{d: d, gc: gc1 != gc0, wake: wake1 != wake0, preempted: cs1 != cs0})
		gc0, allocs0, wake0, cs0 = gc1, allocs1, wake1, cs1
		lastAllocs = allocs1
	}
	var t Tail
	ds := make([]time.Duration, len(info))
	for i, c := range info {
		ds[i] = c.d
	}
	t.Lat = lat.Summarize(ds) // sorts ds
	t.P999 = int64(lat.Percentile(ds, 99.9))
	// The reads between calls allocate nothing (metrics.Read into a
	// reused slice, Stats by value), so the count is the solver's.
	t.AllocsPerCall = float64(lastAllocs-firstAllocs) / float64(calls)
	var clean []time.Duration
	for _, c := range info {
		if c.gc {
			t.GCCycles++
		}
		if c.wake {
			t.Wakeups++
		}
		if c.preempted {
			t.Preempted++
		}
		none := !c.gc && !c.wake && !c.preempted
		if none {
			clean = append(clean, c.d)
		}
		if c.d < t.Lat.P99 {
			continue
		}
		t.Slow++
		switch {
		case c.gc:
			t.SlowGC++
		case c.wake:
			t.SlowWakeup++
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
