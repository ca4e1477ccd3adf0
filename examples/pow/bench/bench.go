// Package bench runs the proof-of-work example's measurements: time per
// search (median and p99) for the serial search and the split ones, the
// first call against later calls (on a fresh set, with and without its
// workers created beforehand), and where the tail of a one-hash search
// comes from. Every nonce found is checked.
package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/workgang/workgang/examples/internal/lat"
	"github.com/workgang/workgang/examples/pow/pow"
	"github.com/workgang/workgang/tasks"
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
	// First0 and FirstPre0 are the same for the one-hash search (difficulty
	// 0): the fixed cost of a first call, without the search.
	First0    lat.Summary `json:"first_one_hash"`
	FirstPre0 lat.Summary `json:"first_one_hash_precreated"`
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
		{name: "RunContext+flag", set: true, make_: func(w *workers.Workers) pow.Solver {
			return pow.ContextFlag{Label: "RunContext+flag", Set: w, Copies: copies}
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
	if o.Copies < 1 || o.Copies > tasks.MaxCopies || o.Calls < 1 || o.FirstCalls < 1 || o.OneHash < 0 || o.Gap < 0 {
		return nil, fmt.Errorf("pow: bad options %+v", o)
	}
	ks := kinds(o.Copies)
	rows := make([]Row, len(ks))
	// first[j][0..3]: First, FirstPre, First0, FirstPre0 samples of solver j.
	first := make([][4][]time.Duration, len(ks))
	for i := range o.FirstCalls {
		p := pow.NewPuzzle(o.Seed+1_000_000+uint64(i), o.Difficulty)
		p0 := pow.NewPuzzle(o.Seed+1_000_000+uint64(i), 0)
		for j, k := range ks {
			for m, pz := range []pow.Puzzle{p, p0} {
				for pre := range 2 {
					d, err := firstCall(k, pz, pre == 1, o)
					if err != nil {
						return nil, err
					}
					first[j][2*m+pre] = append(first[j][2*m+pre], d)
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
		f := &first[j]
		rows[j] = Row{Solver: k.name, Later: lat.Summarize(later[j]), First: lat.Summarize(f[0]), FirstPre: lat.Summarize(f[1]),
			First0: lat.Summarize(f[2]), FirstPre0: lat.Summarize(f[3])}
	}
	return rows, nil
}

// firstCall times one call of a fresh solver after o.Gap idle: for a
// solver with a set, on a new set, created inside the timed region (New
// included) or, with pre, before the gap with its workers started by
// SetActiveWorkers. A solver without a set has nothing to create: pre
// changes nothing for it.
func firstCall(k solverKind, p pow.Puzzle, pre bool, o Options) (time.Duration, error) {
	var w *workers.Workers
	if k.set && pre {
		w = workers.New("pow-"+k.name, o.Copies)
		w.SetActiveWorkers(o.Copies)
	}
	time.Sleep(o.Gap)
	t0 := time.Now()
	if k.set && !pre {
		w = workers.New("pow-"+k.name, o.Copies)
	}
	_, err := solve(k.make_(w), p)
	d := time.Since(t0)
	if w != nil {
		w.Close()
	}
	return d, err
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
