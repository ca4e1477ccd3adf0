// Package bench compares the ported image operations of examples/ports
// with the originals they replace: time per call (as each caller sees it,
// 1 or more goroutines calling at once), CPU time per call and heap
// objects per call, at several image sizes, as ratios port / original
// measured in interleaved rounds of one run. Every output is checked
// against the serial variant's.
package bench

import (
	"bytes"
	"fmt"
	"image"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/workgang/workgang/examples/ports/filter"
	"github.com/workgang/workgang/workers"
)

// Options size the comparison.
type Options struct {
	Sides   []int         // square images of these sides
	Callers []int         // goroutines calling at once, each on its own image
	Rounds  int           // interleaved rounds; the figures are their medians
	Batch   time.Duration // about how long one variant's calls take per round
	Seed    uint64
}

// DefaultOptions: 64x64, 256x256 and 2048x2048 images, 1 and 2 callers, 7
// rounds of about 30 ms per variant.
func DefaultOptions() Options {
	return Options{Sides: []int{64, 256, 2048}, Callers: []int{1, 2}, Rounds: 7, Batch: 30 * time.Millisecond, Seed: 1}
}

// A Pair is a ported variant and the original it replaces.
type Pair struct{ Op, Port, Orig string }

// PerChunk reports whether the port makes the operation's scratch once per
// chunk: the blur's Line helper on ForRange. It is measured to show what
// per-chunk setup costs; ForChunks and Do over the same parts (the ports
// the README recommends for a body with setup) make it once per copy or
// part.
func (p Pair) PerChunk() bool { return p.Op == "blur" && p.Port == filter.LineForRange }

// Pairs are the comparisons made: each helper's port against its original,
// and the blur's ForChunks port against the channel helper's original (both
// make a scratch row once per goroutine or copy).
var Pairs = []Pair{
	{"gray", filter.RowsDo, filter.RowsGo},
	{"gray", filter.LineForRange, filter.LineGo},
	{"gray", filter.LineDo, filter.LineGo},
	{"blur", filter.RowsDo, filter.RowsGo},
	{"blur", filter.LineForRange, filter.LineGo},
	{"blur", filter.LineDo, filter.LineGo},
	{"blur", filter.ForChunks, filter.RowsGo},
}

// Row is one pair at one image size and caller count. Times are medians
// over the rounds; Ratio is the median over rounds of port / original
// measured in the same round (lower is better: below 1 the port is
// faster), with the smallest and largest round's ratio.
type Row struct {
	Pair
	Side    int `json:"side"`
	Callers int `json:"callers"`
	// PortNS, OrigNS and SerialNS are the time per call as a caller sees
	// it: a batch's wall time over the calls each caller made.
	PortNS   float64 `json:"port_ns"`
	OrigNS   float64 `json:"orig_ns"`
	SerialNS float64 `json:"serial_ns"`
	Ratio    float64 `json:"ratio"`
	RatioMin float64 `json:"ratio_min"`
	RatioMax float64 `json:"ratio_max"`
	// CPURatio is the same for the process's CPU time (user + system) per
	// call, the set's waiting workers included.
	CPURatio float64 `json:"cpu_ratio"`
	// PortAllocs and OrigAllocs are heap objects per call.
	PortAllocs float64 `json:"port_allocs"`
	OrigAllocs float64 `json:"orig_allocs"`
	// OnCaller is the share of the port's runs that ran every copy on
	// their caller: runs that found the set busy (another caller's run held
	// it) and runs of one copy (one chunk, or a machine crowded by other
	// processes, where a loop runs on its caller alone).
	OnCaller float64 `json:"on_caller"`
	// WorkerCopies is the share of the port's copies that workers ran (the
	// rest ran on the calling goroutines), Wakeups the parked workers woken
	// per call.
	WorkerCopies float64 `json:"worker_copies"`
	Wakeups      float64 `json:"wakeups"`
	// PortLag and OrigLag are, with more than one caller, the share of a
	// batch's wall time during which some caller had finished its calls
	// and another had not: how unevenly the callers shared the CPUs.
	PortLag float64 `json:"port_lag"`
	OrigLag float64 `json:"orig_lag"`
}

// sample is one variant's batch in one round.
type sample struct {
	wall, cpu, allocs float64 // per call
	onCaller, worker  float64 // shares of the set's runs, copies
	wakeups           float64 // per call
	lag               float64 // share of the wall time
}

// Run measures every pair at every size and caller count. It holds the
// process-wide set "ports" (workers.Acquire, NumCPU workers) while it runs.
func Run(o Options) ([]Row, error) {
	if len(o.Sides) == 0 || len(o.Callers) == 0 || o.Rounds < 1 || o.Batch <= 0 || slices.Min(o.Sides) < 1 || slices.Min(o.Callers) < 1 {
		return nil, fmt.Errorf("ports: bad options %+v", o)
	}
	set, release := workers.Acquire("ports", runtime.NumCPU())
	defer release()
	var rows []Row
	for _, side := range o.Sides {
		for _, callers := range o.Callers {
			rs, err := measure(set, side, callers, o)
			if err != nil {
				return nil, err
			}
			rows = append(rows, rs...)
		}
	}
	return rows, nil
}

// variant is one variant of one operation and its calls per batch.
type variant struct {
	op    string
	v     filter.Variant
	calls int // per caller per batch
}

// measure runs the rounds at one size and caller count. A round runs each
// operation's serial variant, then each pair, its original and its port
// back to back (in turns which first), the pairs in an order rotated every
// round, so that a port and its original see the same machine.
func measure(set *workers.Workers, side, callers int, o Options) ([]Row, error) {
	r := image.Rect(0, 0, side, side)
	src := image.NewRGBA(r)
	rng := rand.New(rand.NewPCG(o.Seed, uint64(side)))
	for i := range src.Pix {
		src.Pix[i] = uint8(rng.Uint32())
	}
	dsts := make([]*image.RGBA, callers)
	for i := range dsts {
		dsts[i] = image.NewRGBA(r)
	}
	vs := map[[2]string]*variant{}
	want := map[string][]byte{}
	for _, op := range filter.Ops() {
		ref := image.NewRGBA(r)
		op.Variants[0].Run(set, ref, src) // serial
		want[op.Name] = ref.Pix
		for _, v := range op.Variants {
			// Calibrate on one call, after a warm-up call.
			v.Run(set, dsts[0], src)
			t0 := time.Now()
			v.Run(set, dsts[0], src)
			calls := max(1, min(100_000, int(o.Batch/max(time.Since(t0), time.Microsecond))))
			vs[[2]string{op.Name, v.Name}] = &variant{op: op.Name, v: v, calls: calls}
		}
	}
	m := newMeter(set)
	run := func(op, name string) (sample, error) {
		x := vs[[2]string{op, name}]
		s := batch(m, x, src, dsts)
		for _, d := range dsts {
			if !bytes.Equal(d.Pix, want[op]) {
				return s, fmt.Errorf("ports: %s %s at %dx%d, %d callers: output differs from the serial variant's", op, name, side, side, callers)
			}
			clear(d.Pix)
		}
		return s, nil
	}
	serial := map[string][]sample{}
	port, orig := make([][]sample, len(Pairs)), make([][]sample, len(Pairs))
	for round := range o.Rounds {
		for _, op := range filter.Ops() {
			s, err := run(op.Name, filter.Serial)
			if err != nil {
				return nil, err
			}
			serial[op.Name] = append(serial[op.Name], s)
		}
		for i := range Pairs {
			j := (i + round) % len(Pairs)
			p := Pairs[j]
			for k := range 2 {
				if (k+round)%2 == 0 {
					s, err := run(p.Op, p.Orig)
					if err != nil {
						return nil, err
					}
					orig[j] = append(orig[j], s)
				} else {
					s, err := run(p.Op, p.Port)
					if err != nil {
						return nil, err
					}
					port[j] = append(port[j], s)
				}
			}
		}
	}
	med := func(ss []sample, f func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		return median(v)
	}
	wall := func(s sample) float64 { return s.wall }
	allocs := func(s sample) float64 { return s.allocs }
	lag := func(s sample) float64 { return s.lag }
	var rows []Row
	for j, p := range Pairs {
		ratios, cpu := make([]float64, o.Rounds), make([]float64, o.Rounds)
		for i := range o.Rounds {
			ratios[i] = port[j][i].wall / orig[j][i].wall
			cpu[i] = port[j][i].cpu / orig[j][i].cpu
		}
		rows = append(rows, Row{
			Pair: p, Side: side, Callers: callers,
			PortNS: med(port[j], wall), OrigNS: med(orig[j], wall), SerialNS: med(serial[p.Op], wall),
			Ratio: median(ratios), RatioMin: slices.Min(ratios), RatioMax: slices.Max(ratios),
			CPURatio:   median(cpu),
			PortAllocs: med(port[j], allocs), OrigAllocs: med(orig[j], allocs),
			OnCaller:     med(port[j], func(s sample) float64 { return s.onCaller }),
			WorkerCopies: med(port[j], func(s sample) float64 { return s.worker }),
			Wakeups:      med(port[j], func(s sample) float64 { return s.wakeups }),
			PortLag:      med(port[j], lag),
			OrigLag:      med(orig[j], lag),
		})
	}
	return rows, nil
}

// batch runs x.calls calls of x on each of len(dsts) goroutines at once,
// and returns the time per call as each caller saw it, the CPU time and
// heap objects per call, and the share of the set's runs that ran on their
// caller (meaningful for a ported variant only).
func batch(m *meter, x *variant, src *image.RGBA, dsts []*image.RGBA) sample {
	var wg sync.WaitGroup
	start := make(chan struct{})
	var t0 time.Time
	done := make([]time.Duration, len(dsts)) // when each caller finished
	for i, d := range dsts {
		wg.Go(func() {
			<-start // t0 is written before start is closed
			for range x.calls {
				x.v.Run(m.set, d, src)
			}
			done[i] = time.Since(t0) // read after wg.Wait
		})
	}
	runtime.Gosched() // let the callers reach start
	before := m.read()
	t0 = time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t0)
	after := m.read()
	calls := float64(x.calls * len(dsts))
	s := sample{
		wall:   float64(wall) / float64(x.calls),
		cpu:    float64(after.cpu-before.cpu) / calls,
		allocs: float64(after.allocs-before.allocs) / calls,
	}
	a, b := after.st, before.st
	if runs := a.Runs - b.Runs; runs > 0 {
		s.onCaller = float64(a.BusyRuns+a.InlineRuns-b.BusyRuns-b.InlineRuns) / float64(runs)
	}
	if copies := a.WorkerCopies + a.CallerCopies - b.WorkerCopies - b.CallerCopies; copies > 0 {
		s.worker = float64(a.WorkerCopies-b.WorkerCopies) / float64(copies)
	}
	s.wakeups = float64(a.Wakeups-b.Wakeups) / calls
	s.lag = float64(wall-slices.Min(done)) / float64(wall)
	return s
}

// counters are what a batch reads before and after it.
type counters struct {
	cpu    time.Duration // the process's user + system time
	allocs uint64        // heap objects allocated since the program started
	st     workers.Stats
}

// meter reads the counters of a set without allocating, so that a batch's
// allocation count is its calls'. It reads MemStats (which stops the world
// briefly, outside the timed region) because runtime/metrics counts a P's
// allocations only when its cache is flushed: not exact over a few calls.
type meter struct {
	set *workers.Workers
	ms  runtime.MemStats
}

func newMeter(set *workers.Workers) *meter { return &meter{set: set} }

func (m *meter) read() counters {
	runtime.ReadMemStats(&m.ms)
	c := counters{allocs: m.ms.Mallocs, st: m.set.Stats()}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return c
}

// median returns the median of v (the mean of the middle two for an even
// count), sorting v.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
