package gtest

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/race"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

var (
	soakRuns = flag.Int("soak.runs", 0, "TestSoak: back-to-back runs per configuration; 0 means a short default "+
		"(the full soak of docs/testing.md is -soak.runs=1000000)")
	soakSeed = flag.Uint64("soak.seed", 0, "TestSoak: random seed; 0 picks one from the clock (it is logged)")
)

// soakTask counts every copy of every run. Each run has a generation g; copy
// id swaps g into slots[id], so after the run slots[0..n-1] must all hold g
// (no lost copy), none of slots[n..] may (no copy out of range), and no swap
// may have returned g already (no doubled copy). A copy that runs while the
// submitter is not inside RunN is counted as stray.
type soakTask struct {
	gen     atomic.Uint64
	inRun   atomic.Bool
	slots   []atomic.Uint64
	copies  atomic.Int64
	doubled atomic.Int64
	stray   atomic.Int64
	work    atomic.Int32 // 0: empty copy; 1: a short busy loop; 2: runtime.Gosched
	sink    atomic.Uint64
	// callerG is the submitter's goroutine, plain is set for a run that does
	// not opt in to caller-runs: its copies must never run on the
	// submitter (onCaller counts those that did).
	callerG  uint64
	plain    atomic.Bool
	onCaller atomic.Int64
}

func newSoakTask(max int) *soakTask { return &soakTask{slots: make([]atomic.Uint64, max)} }

func (s *soakTask) Name() string { return "soak" }

func (s *soakTask) Work(id int) {
	g := s.gen.Load()
	if !s.inRun.Load() {
		s.stray.Add(1)
	}
	if s.slots[id].Swap(g) == g {
		s.doubled.Add(1)
	}
	if s.plain.Load() && goid.Get() == s.callerG {
		s.onCaller.Add(1)
	}
	switch s.work.Load() {
	case 1:
		x := uint64(id)
		for i := range 200 {
			x = x*6364136223846793005 + uint64(i)
		}
		s.sink.Add(x)
	case 2:
		runtime.Gosched()
	}
	s.copies.Add(1)
}

// soakConfig is one soak configuration: GOMAXPROCS, the set's size, how
// many goroutines submit runs to the one set at once, and whether the sets
// have WithConcurrentRuns (caller-runs runs then run on their submitters
// when the set is busy).
type soakConfig struct {
	name       string
	procs      int
	max        int
	submitters int
	concurrent bool
}

func soakConfigs() []soakConfig {
	return []soakConfig{
		{"GOMAXPROCS=1/max=3", 1, 3, 1, false},
		{"GOMAXPROCS=2/max=2", 2, 2, 1, false},
		{"GOMAXPROCS=2/max=8 (4x oversubscribed)", 2, 8, 1, false},
		{"GOMAXPROCS=2/max=4/2 submitters", 2, 4, 2, false},
		{"GOMAXPROCS=2/max=4/4 submitters/concurrent runs", 2, 4, 4, true},
		{"GOMAXPROCS=1/max=2/3 submitters/concurrent runs", 1, 2, 3, true},
	}
}

// soakSpins are the spin budgets a soak set is created with; -1 means no
// WithSpin option (the default, 50 us).
var soakSpins = []time.Duration{-1, 0, time.Microsecond, 5 * time.Microsecond, 50 * time.Microsecond}

// TestSoak runs many back-to-back runs with random n, random caller-runs and
// random spin budgets and checks every copy of every run. A set is closed and
// replaced by one with a new random spin budget and active count every few
// hundred runs, so creation and Close are soaked too.
func TestSoak(t *testing.T) {
	runs := *soakRuns
	if runs == 0 {
		switch {
		case testing.Short():
			runs = 2000
		case race.Enabled:
			runs = 6000
		default:
			runs = 100000
		}
	}
	seed := *soakSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("soak: %d runs per configuration, -soak.seed=%d", runs, seed)
	for ci, cfg := range soakConfigs() {
		t.Run(cfg.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.procs))
			soak(t, cfg, runs, seed+uint64(ci))
			goleak.VerifyNone(t, goleak.IgnoreCurrent())
		})
	}
}

func soak(t *testing.T, cfg soakConfig, runs int, seed uint64) {
	var (
		mu       sync.Mutex
		w        *workers.Workers
		setRuns  int // runs left on the current set
		sets     int
		busy     uint64 // Stats.BusyRuns of the sets closed so far
		progress atomic.Int64
		caller   atomic.Int64
		copies   atomic.Int64
	)
	setRNG := rand.New(rand.NewPCG(seed, 0))
	// next returns the set to run on, replacing it when its quota of runs is
	// used up. With several submitters, another one may still be running on
	// the old set while it is closed: its run either completes (Close waits
	// for it) or, arriving after Close, panics "set is closed" and is retried
	// on the new set, so Close racing Run is soaked as well.
	next := func() *workers.Workers {
		mu.Lock()
		defer mu.Unlock()
		if w == nil || setRuns <= 0 {
			if w != nil {
				w.Close()
				st := w.Stats()
				busy += st.BusyRuns
			}
			var opts []workers.Option
			if spin := soakSpins[setRNG.IntN(len(soakSpins))]; spin >= 0 {
				opts = append(opts, workers.WithSpin(spin))
			}
			opts = append(opts, workers.WithActiveWorkers(1+setRNG.IntN(cfg.max)))
			if cfg.concurrent {
				opts = append(opts, workers.WithConcurrentRuns())
			}
			w = workers.New(fmt.Sprintf("soak-%d", sets), cfg.max, opts...)
			sets++
			setRuns = 50 + setRNG.IntN(1000)
		}
		setRuns--
		return w
	}
	stop := watchdog(t, "soak "+cfg.name, &progress, time.Minute)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, cfg.submitters)
	perSubmitter := runs / cfg.submitters
	for sub := range cfg.submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- soakSubmitter(cfg, perSubmitter, seed+uint64(1+sub)*0x9e3779b97f4a7c15, next, &progress, &caller, &copies)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stop()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	mu.Lock()
	w.Close()
	st := w.Stats()
	busy += st.BusyRuns
	mu.Unlock()
	done := progress.Load()
	require.Equal(t, int64(perSubmitter*cfg.submitters), done, "runs completed")
	if !cfg.concurrent {
		require.Zero(t, busy, "busy runs on sets without concurrent runs")
	}
	t.Logf("%s: %d runs (%d copies; %d runs with caller-runs, %d of them on a busy set) on %d sets in %v: %.0f runs/s, %.0f copies/s",
		cfg.name, done, copies.Load(), caller.Load(), busy, sets, elapsed.Round(time.Millisecond),
		float64(done)/elapsed.Seconds(), float64(copies.Load())/elapsed.Seconds())
}

// soakSubmitter makes runs back-to-back runs on the sets next returns and
// checks each; it returns the first violation.
func soakSubmitter(cfg soakConfig, runs int, seed uint64, next func() *workers.Workers,
	progress, onCaller, copiesTotal *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := newSoakTask(cfg.max)
	s.callerG = goid.Get()
	plain := tasks.Task(s)
	callerRuns := tasks.CallerRuns(s)
	var gen uint64
	for r := 0; r < runs; {
		w := next()
		n := 1 + rng.IntN(cfg.max)
		task := plain
		if rng.IntN(2) == 0 {
			task = callerRuns
		}
		// Run after SetActiveWorkers(n) now and then; only with a single
		// submitter, since another could change the active count in between.
		useRun := cfg.submitters == 1 && rng.IntN(16) == 0
		switch k := rng.IntN(8); {
		case k < 5:
			s.work.Store(0)
		case k < 7:
			s.work.Store(1)
		default:
			s.work.Store(2)
		}
		gen++
		s.gen.Store(gen)
		s.plain.Store(task == plain)
		before := s.copies.Load()
		closed, err := soakOne(w, task, n, useRun, s)
		if err != nil {
			return fmt.Errorf("run %d (n=%d, callerRuns=%v, set %q): %v", r, n, task == callerRuns, w.Name(), err)
		}
		if closed {
			// The set was replaced under us: no copy may have run.
			if got := s.copies.Load() - before; got != 0 {
				return fmt.Errorf("run %d: %d copies ran although RunN panicked \"set is closed\"", r, got)
			}
			continue
		}
		if got := s.copies.Load() - before; got != int64(n) {
			return fmt.Errorf("run %d (n=%d, callerRuns=%v): %d copies ran; want %d", r, n, task == callerRuns, got, n)
		}
		for id := range cfg.max {
			ran := s.slots[id].Load() == gen
			if ran != (id < n) {
				return fmt.Errorf("run %d (n=%d, callerRuns=%v): copy %d ran=%v; want %v", r, n, task == callerRuns, id, ran, id < n)
			}
		}
		if d, st := s.doubled.Load(), s.stray.Load(); d != 0 || st != 0 {
			return fmt.Errorf("run %d (n=%d, callerRuns=%v): %d doubled copies, %d copies outside RunN", r, n, task == callerRuns, d, st)
		}
		if oc := s.onCaller.Load(); oc != 0 {
			return fmt.Errorf("run %d (n=%d): %d copies of a plain run ran on the submitter", r, n, oc)
		}
		copiesTotal.Add(int64(n))
		if task == callerRuns {
			onCaller.Add(1) // runs that let the caller take copies
		}
		progress.Add(1)
		r++
	}
	return nil
}

// soakOne makes one run and reports whether it was refused because the set
// had been closed (by the set replacement of another submitter); any other
// panic is an error.
func soakOne(w *workers.Workers, task tasks.Task, n int, useRun bool, s *soakTask) (closed bool, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		for _, op := range []string{"Run", "RunN", "SetActiveWorkers"} {
			if v == fmt.Sprintf("workers: %s on %q: set is closed", op, w.Name()) {
				closed = true
				return
			}
		}
		err = fmt.Errorf("unexpected panic: %v", v)
	}()
	s.inRun.Store(true)
	defer s.inRun.Store(false)
	if useRun {
		if got := w.SetActiveWorkers(n); got != n {
			return false, fmt.Errorf("SetActiveWorkers(%d) = %d", n, got)
		}
		// Another submitter may change the active count in between; Run
		// then runs that many copies, which the caller cannot check. So Run
		// only with a single submitter, RunN otherwise.
		w.Run(task)
		return false, nil
	}
	w.RunN(task, n)
	return false, nil
}

// watchdog fails the test with every goroutine's stack if progress does not
// move for limit: a hang detector, not a timing assertion (limit is far above
// any run's duration even on a loaded machine). The returned function stops it.
func watchdog(t *testing.T, what string, progress *atomic.Int64, limit time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		last, since := progress.Load(), time.Now()
		tick := time.NewTicker(limit / 20)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if p := progress.Load(); p != last {
				last, since = p, time.Now()
				continue
			}
			if time.Since(since) >= limit {
				// A hung run cannot be unblocked from here, so the process
				// must end; panic prints the message with all stacks.
				panic(fmt.Sprintf("%s (%s): no progress for %v after %d operations; a run hangs. All goroutines:\n%s",
					t.Name(), what, limit, last, testutil.AllStacks()))
			}
		}
	}()
	return func() { close(done); <-finished }
}
