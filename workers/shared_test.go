package workers_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// A holder cannot close a shared set: Close on it panics and changes
// nothing; the last release closes it.
func TestAcquiredSetRefusesClose(t *testing.T) {
	s, release := workers.Acquire("shared-close", 2)
	assert.PanicsWithValue(t, `workers: Close on "shared-close": a shared set is closed by its last release (the function Acquire returned; Default's set never), not by Close`, s.Close)
	p := newProbe(2, false)
	s.RunN(p, 2)
	p.check(t, 0)
	release()
	assert.Zero(t, workers.SharedSets())
	assert.Panics(t, func() { s.RunN(p, 2) }, "closed by the release")
}

// The methods reach the shared set.
func TestSharedForwards(t *testing.T) {
	s, release := workers.Acquire("shared-forward", 3, workers.WithActiveWorkers(2))
	defer release()
	assert.Equal(t, "shared-forward", s.Name())
	assert.Equal(t, 3, s.MaxWorkers())
	assert.Equal(t, 2, s.ActiveWorkers())
	assert.Equal(t, 3, s.SetActiveWorkers(3))
	assert.Equal(t, 3, s.CreatedWorkers())
	p := newProbe(3, false)
	s.Run(p)
	p.check(t, 0)
	p = newProbe(2, true)
	s.RunN(p, 2)
	p.check(t, 0)
	sum := make([]int, 100)
	s.ForRange(len(sum), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			sum[i] = i
		}
	}, workers.WithChunk(7))
	for i, v := range sum {
		require.Equal(t, i, v)
	}
	assert.Equal(t, uint64(3), s.Stats().Runs)
	assert.Empty(t, s.PlacementErrors())
}

// Acquire panics for the same arguments New does even when the name is
// held; the held set is unchanged and no reference is taken.
func TestAcquireChecksHeldName(t *testing.T) {
	s, release := workers.Acquire("held", 2)
	before := s.ActiveWorkers()
	for _, tc := range []struct {
		name string
		max  int
		opts []workers.Option
		want string
	}{
		{"max 0", 0, nil, `workers: Acquire("held"): maxWorkers = 0 out of range [1, 65536]`},
		{"max -1", -1, nil, `workers: Acquire("held"): maxWorkers = -1 out of range [1, 65536]`},
		{"max MaxSetSize+1", tasks.MaxCopies + 1, nil, `workers: Acquire("held"): maxWorkers = 65537 out of range [1, 65536]`},
		{"nil option", 2, []workers.Option{workers.WithSpin(0), nil}, `workers: Acquire("held"): option 1 is nil`},
		{"active 0", 2, []workers.Option{workers.WithActiveWorkers(0)}, `workers: Acquire("held"): WithActiveWorkers(0) out of range [1, 2]`},
		{"active above max", 4, []workers.Option{workers.WithActiveWorkers(5)}, `workers: Acquire("held"): WithActiveWorkers(5) out of range [1, 4]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The same arguments make New panic too.
			assert.Panics(t, func() { workers.New("held", tc.max, tc.opts...) })
			assert.PanicsWithValue(t, tc.want, func() { workers.Acquire("held", tc.max, tc.opts...) })
			// And so for a name nobody holds: nothing is registered.
			assert.Panics(t, func() { workers.Acquire("not-held", tc.max, tc.opts...) })
			assert.Equal(t, 1, workers.SharedSets())
		})
	}
	assert.Equal(t, before, s.ActiveWorkers(), "the held set is unchanged")
	// No reference was taken: the one release closes the set.
	release()
	assert.Zero(t, workers.SharedSets())
	assert.PanicsWithValue(t, `workers: Run on "held": set is closed`,
		func() { s.Run(tasks.Func("late", func(int) {})) })
}

// A later Acquire of a held name gets the set as it is, options unchanged,
// except that a larger maxWorkers wins: the set's MaxWorkers rises (and
// ActiveWorkers with it, as no holder lowered it), runs use the new workers,
// and Stats keeps the counts of the workers it replaced. A smaller one
// changes nothing.
func TestAcquireLargestMaxWins(t *testing.T) {
	a, releaseA := workers.Acquire("held-grow", 2)
	defer releaseA()
	p := newProbe(2, false)
	a.RunN(p, 2) // workers of the first crew ran copies
	p.check(t, 0)
	before := a.Stats().WorkerCopies
	b, releaseB := workers.Acquire("held-grow", 8, workers.WithActiveWorkers(5))
	defer releaseB()
	require.Same(t, a, b)
	assert.Equal(t, fmt.Sprint(8, 8), fmt.Sprint(b.MaxWorkers(), b.ActiveWorkers()), "the larger maxWorkers wins; options stay the first's")
	assert.Equal(t, before, b.Stats().WorkerCopies, "the replaced workers' counts stay")
	p = newProbe(8, false)
	b.RunN(p, 8)
	p.check(t, 0)
	assert.Equal(t, before+8, b.Stats().WorkerCopies)
	c, releaseC := workers.Acquire("held-grow", 4)
	defer releaseC()
	assert.Equal(t, 8, c.MaxWorkers(), "a smaller request changes nothing")

	lowered, releaseL := workers.Acquire("held-grow-lowered", 2)
	defer releaseL()
	lowered.SetActiveWorkers(1)
	_, releaseM := workers.Acquire("held-grow-lowered", 4)
	defer releaseM()
	assert.Equal(t, fmt.Sprint(4, 1), fmt.Sprint(lowered.MaxWorkers(), lowered.ActiveWorkers()), "a lowered ActiveWorkers stays")
}

// Raising a set's MaxWorkers waits for its run in progress, which keeps the
// workers it started with; runs from several goroutines go on meanwhile.
func TestAcquireGrowsWhileRunning(t *testing.T) {
	s, release := workers.Acquire("grow-running", 2)
	defer release()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				var hits [2]atomic.Int32
				s.RunN(tasks.Func("plain", func(id int) { hits[id].Add(1) }), 2)
				for id := range hits {
					if got := hits[id].Load(); got != 1 {
						t.Errorf("copy %d ran %d times", id, got)
					}
				}
				s.Do(8, func(int) {})
			}
		}()
	}
	for _, max := range []int{3, 4, 6} {
		_, r := workers.Acquire("grow-running", max)
		defer r()
		assert.Equal(t, max, s.MaxWorkers())
	}
	stop.Store(true)
	wg.Wait()
}

// The last release from inside one of the set's own copies
// panics without consuming anything: the entry stays, the set keeps working,
// and the same release function closes it after the run.
func TestLastReleaseInsideOwnCopy(t *testing.T) {
	for _, callerRuns := range []bool{false, true} {
		s, release := workers.Acquire("release-inside", 2)
		var task tasks.Task = tasks.Func("release", func(worker int) {
			if worker == 1 {
				release()
			}
		})
		if callerRuns {
			task = tasks.CallerRuns(task)
		}
		pe := capturePanic(t, func() { s.RunN(task, 2) })
		assert.Equal(t, `workers: last release of shared set "release-inside" called from inside one of its own copies (directly or through nested runs on other sets): it would close the set during its own run; release it after the run`, pe.Value)
		assert.Equal(t, 1, workers.SharedSets(), "callerRuns=%v: the entry stays", callerRuns)
		p := newProbe(2, false)
		s.RunN(p, 2) // still open and usable
		p.check(t, 0)
		release() // not consumed by the failed call: closes now
		assert.Zero(t, workers.SharedSets())
		assert.Panics(t, func() { s.RunN(p, 2) }, "closed")
	}
}

// A release that is not the last may come from inside a copy.
func TestNonLastReleaseInsideOwnCopy(t *testing.T) {
	s, releaseA := workers.Acquire("release-inside-2", 2)
	_, releaseB := workers.Acquire("release-inside-2", 2)
	s.RunN(tasks.Func("release", func(worker int) {
		if worker == 0 {
			releaseB()
		}
	}), 2)
	assert.Equal(t, 1, workers.SharedSets())
	releaseA()
	assert.Zero(t, workers.SharedSets())
}

func TestSharedSets(t *testing.T) {
	a, releaseA := workers.Acquire("shared-basic", 2)
	b, releaseB := workers.Acquire("shared-basic", 1) // a smaller max: the set as it is
	require.Same(t, a, b)
	assert.Equal(t, 2, b.MaxWorkers())
	assert.Equal(t, 1, workers.SharedSets())

	releaseA()
	releaseA() // idempotent: must not drop B's reference
	p := newProbe(2, false)
	b.RunN(p, 2)
	p.check(t, 0)

	releaseB()
	assert.Zero(t, workers.SharedSets())
	assert.PanicsWithValue(t, `workers: RunN on "shared-basic": set is closed`, func() { b.RunN(p, 2) })

	c, releaseC := workers.Acquire("shared-basic", 3)
	defer releaseC()
	assert.NotSame(t, a, c, "a released name gets a fresh set")
	assert.Equal(t, 3, c.MaxWorkers())
	assert.Panics(t, func() { workers.Acquire("shared-bad", 0) })
	assert.Equal(t, 1, workers.SharedSets(), "a failed Acquire must not register")
}

// TestSharedSetManyHolders: holders acquire, run concurrently and release;
// every run completes correctly and every holder finishes (none starved).
func TestSharedSetManyHolders(t *testing.T) {
	const holders, runs = 12, 150
	var copies atomic.Int64
	finished := make([]atomic.Int32, holders)
	errs := make(chan error, holders)
	testutil.RunCopies(holders, func(h int) {
		w, release := workers.Acquire("shared-many", 4)
		defer release()
		for r := range runs {
			n := 1 + (h+r)%w.MaxWorkers()
			p := newProbe(n, r%2 == 0)
			w.RunN(p, n)
			for id := range p.runs {
				if p.runs[id].Load() != 1 {
					errs <- fmt.Errorf("holder %d run %d: copy %d ran %d times", h, r, id, p.runs[id].Load())
					return
				}
			}
			copies.Add(int64(n))
			finished[h].Add(1)
		}
	})
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for h := range holders {
		assert.Equal(t, int32(runs), finished[h].Load(), "holder %d", h)
	}
	assert.Zero(t, workers.SharedSets(), "the last release must close and unregister the set")
}

// TestNestedLastReleasePanicsConsumingNothing: the last release of a shared
// set B from a copy nested in B's run (directly, through a plain run on
// another set, through an inline run on a set without workers) panics
// before anything changes: the name stays registered, B stays usable, the
// same release function closes it later.
func TestNestedLastReleasePanicsConsumingNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(b *workers.Workers, a *workers.Workers, rel func())
	}{
		{"direct", func(b *workers.Workers, _ *workers.Workers, rel func()) {
			b.RunN(tasks.Func("rel", func(int) { rel() }), 1)
		}},
		{"through a plain run", func(b *workers.Workers, a *workers.Workers, rel func()) {
			b.RunN(tasks.Func("outer", func(int) {
				a.RunN(tasks.Func("inner", func(int) { rel() }), 1)
			}), 1)
		}},
		{"through an inline run", func(b *workers.Workers, a *workers.Workers, rel func()) {
			b.RunN(tasks.Func("outer", func(int) {
				a.RunN(tasks.CallerRuns(tasks.Func("inner", func(int) { rel() })), 1)
			}), 1)
		}},
		{"through two sets", func(b *workers.Workers, a *workers.Workers, rel func()) {
			c := workers.New("rel-C", 1)
			defer c.Close()
			b.RunN(tasks.Func("outer", func(int) {
				a.RunN(tasks.Func("middle", func(int) {
					c.RunN(tasks.CallerRuns(tasks.Func("inner", func(int) { rel() })), 1)
				}), 1)
			}), 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := workers.SharedSets()
			b, relB := workers.Acquire("rel-B", 2)
			a := workers.New("rel-A", 1)
			defer a.Close()
			var v any
			testutil.Within(t, "the runs", 20*time.Second, func() { v = panicValue(func() { tc.run(b, a, relB) }) })
			msg := nestedMessage(v)
			assert.Equal(t, `workers: last release of shared set "rel-B" called from inside one of its own copies (directly or through nested runs on other sets): it would close the set during its own run; release it after the run`, msg)
			assert.Equal(t, before+1, workers.SharedSets(), "the name stays registered")
			b2, relB2 := workers.Acquire("rel-B", 2)
			assert.Same(t, b, b2, "Acquire finds the same set")
			relB2()
			p := newProbe(2, false)
			b.RunN(p, 2) // still open and usable
			p.check(t, 0)
			relB() // not consumed: closes now
			assert.Equal(t, before, workers.SharedSets())
			assert.Panics(t, func() { b.RunN(p, 2) }, "closed")
		})
	}
}

// TestLastReleaseInsideLockFreeRunCloses: a shared set has concurrent runs,
// and a run of one caller-runs copy there takes no lock and uses no worker:
// a last release from inside it closes the set, as Close would.
func TestLastReleaseInsideLockFreeRunCloses(t *testing.T) {
	before := workers.SharedSets()
	b, relB := workers.Acquire("rel-lock-free", 2)
	testutil.Within(t, "the runs", 20*time.Second, func() {
		b.RunN(tasks.CallerRuns(tasks.Func("rel", func(int) { relB() })), 1)
	})
	assert.Equal(t, before, workers.SharedSets())
	assert.Panics(t, func() { b.RunN(newProbe(1, false), 1) }, "closed")
}

// TestNestedReleaseOfOtherSetAllowed: the last release of a set from a copy
// of another set's run, while the released set runs nothing, is not nested
// and closes it.
func TestNestedReleaseOfOtherSetAllowed(t *testing.T) {
	before := workers.SharedSets()
	_, relB := workers.Acquire("rel-other", 2)
	a := workers.New("rel-other-A", 2)
	defer a.Close()
	a.RunN(tasks.Func("rel", func(id int) {
		if id == 0 {
			relB()
		}
	}), 2)
	assert.Equal(t, before, workers.SharedSets())
}

// A nested Acquire that would raise the set's MaxWorkers from inside a copy
// of the set's own run panics (the growth would wait for that run) and takes
// no reference: the holder's release still closes the set, its workers exit,
// and the next Acquire makes a new set.
func TestNestedGrowingAcquireTakesNoReference(t *testing.T) {
	for _, callerRuns := range []bool{false, true} {
		name := fmt.Sprint("nested-grow-", callerRuns)
		s, release := workers.Acquire(name, 2)
		var panics [2]atomic.Value
		var task tasks.Task = tasks.Func("nested", func(id int) {
			panics[id].Store(nestedMessage(panicValue(func() { workers.Acquire(name, 4) })))
		})
		if callerRuns {
			task = tasks.CallerRuns(task)
		}
		testutil.Within(t, "the run", 20*time.Second, func() { s.RunN(task, 2) })
		for id := range panics {
			assert.Contains(t, panics[id].Load(), "raising MaxWorkers waits for the run in progress", "callerRuns=%v copy %d", callerRuns, id)
		}
		assert.Equal(t, 2, s.MaxWorkers(), "not grown")
		release()
		assert.Zero(t, workers.SharedSets(), "callerRuns=%v: the holder's release was the last", callerRuns)
		assert.Panics(t, func() { s.RunN(newProbe(1, false), 1) }, "closed")
		s2, release2 := workers.Acquire(name, 4)
		assert.NotSame(t, s, s2, "a new set")
		release2()
	}
}

// Default makes one set on first use, sized to the machine, without
// starting a goroutine; every call returns it, concurrent first calls
// included, and once made it costs no allocation.
func TestDefault(t *testing.T) {
	workers.ResetDefault()
	defer workers.ResetDefault()
	before := goleak.IgnoreCurrent()
	got := make([]*workers.Workers, 8)
	testutil.RunCopies(len(got), func(i int) { got[i] = workers.Default() })
	s := got[0]
	require.NotNil(t, s)
	for i := range got {
		assert.Same(t, s, got[i], "call %d", i)
	}
	assert.Equal(t, fmt.Sprint(workers.DefaultName, runtime.NumCPU(), runtime.NumCPU(), 0),
		fmt.Sprint(s.Name(), s.MaxWorkers(), s.ActiveWorkers(), s.CreatedWorkers()))
	goleak.VerifyNone(t, before) // first use started no goroutine
	if !raceEnabled {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = workers.Default() }))
	}
	assert.PanicsWithValue(t, `workers: Close on "default": a shared set is closed by its last release (the function Acquire returned; Default's set never), not by Close`, s.Close)
	n := min(2, s.MaxWorkers())
	p := newProbe(n, false)
	s.RunN(p, n)
	p.check(t, 0)
	assert.Zero(t, workers.SharedSets(), "not in Acquire's registry")
}

// SetDefault sizes the default set before first use, and panics, changing
// nothing, after it; bad arguments panic before anything is made.
func TestSetDefault(t *testing.T) {
	workers.ResetDefault()
	defer workers.ResetDefault()
	assert.PanicsWithValue(t, `workers: SetDefault("default"): maxWorkers = 0 out of range [1, 65536]`, func() { workers.SetDefault(0) })
	assert.PanicsWithValue(t, `workers: SetDefault("default"): WithActiveWorkers(4) out of range [1, 3]`, func() { workers.SetDefault(3, workers.WithActiveWorkers(4)) })
	workers.SetDefault(3, workers.WithActiveWorkers(2))
	s := workers.Default()
	assert.Equal(t, fmt.Sprint(3, 2), fmt.Sprint(s.MaxWorkers(), s.ActiveWorkers()))
	assert.PanicsWithValue(t, `workers: SetDefault(5): the default set already exists (made by Default or SetDefault with MaxWorkers 3); call SetDefault once, at the start of main, before anything uses Default`, func() { workers.SetDefault(5) })
	assert.Same(t, s, workers.Default())
	assert.Equal(t, 3, s.MaxWorkers(), "unchanged")

	workers.ResetDefault()
	n := runtime.NumCPU()
	_ = workers.Default()
	assert.PanicsWithValue(t, fmt.Sprintf(`workers: SetDefault(1): the default set already exists (made by Default or SetDefault with MaxWorkers %d); call SetDefault once, at the start of main, before anything uses Default`, n), func() { workers.SetDefault(1) })
}
