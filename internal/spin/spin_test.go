package spin

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// withView sets the processor view (procs, contended) for a test, with the
// given hints, and returns a function that restores both.
func withView(procs int, contended bool, h Hint) (restore func()) {
	old := SetHints(h)
	restoreView := ForceView(procs, contended)
	return func() {
		restoreView()
		SetHints(old)
	}
}

func TestAllow(t *testing.T) {
	for _, tc := range []struct {
		budget    time.Duration
		procs     int
		contended bool
		hints     Hint
		want      time.Duration
	}{
		{Default, 1, false, allHints, 0},
		{Default, 1, false, 0, 0}, // one processor: no spin even when plain
		{Default, 2, false, allHints, Default},
		{Default, 8, false, allHints, Default},
		{time.Hour, 2, false, allHints, time.Hour}, // an explicit budget stands
		{0, 4, false, allHints, 0},
		{Default, 2, true, allHints, 0}, // contended
		{Default, 2, true, 0, Default},  // contended, but the load hint is off
	} {
		restore := withView(tc.procs, tc.contended, tc.hints)
		if got := Allow(tc.budget); got != tc.want {
			t.Errorf("Allow(%v) with procs %d contended %v hints %v = %v; want %v",
				tc.budget, tc.procs, tc.contended, tc.hints, got, tc.want)
		}
		restore()
	}
}

// The rule for an idle worker: it spins the set's budget if its id is below
// Procs() and runs need it, an eighth after one run that did not, nothing
// after two; a worker whose id is Procs() or more never spins; a contended
// view or one processor cuts every budget to 0.
func TestIdleBudgets(t *testing.T) {
	restore := withView(4, false, allHints)
	defer restore()
	p := NewPolicy()
	p.SetBudget(time.Hour) // a spin that gives up early would hang the test
	var w Waiter
	spinsAs := func(i int, needed bool) (polls int) {
		p.Idle(&w, i, needed, func() bool { polls++; return polls > 3 })
		return polls
	}
	spins := func(needed bool) int { return spinsAs(3, needed) }
	assert.Equal(t, 4, spins(true), "needed: spins until done")
	assert.Equal(t, 4, spins(false), "one miss: still spins (an eighth of an hour)")
	assert.Equal(t, 1, spins(false), "two misses: polls once and parks")
	assert.Equal(t, 4, spins(true), "needed again: full budget")
	assert.Equal(t, 1, spinsAs(4, true), "id Procs(): the processors are taken, no spin")
	view.word.Store(viewWord(4, true))
	assert.Equal(t, 1, spins(true), "contended: no spin")
	view.word.Store(viewWord(1, false))
	assert.Equal(t, 1, spinsAs(0, true), "one processor: no spin")
}

// The rule for the coordinator: it spins while the copies that have not
// returned are fewer than the processors, and parks (End returns false) as
// soon as they are not, after a last look of endPolls polls, or at once on a
// contended view; End returns true only for a run that ended.
func TestEndSpinsWhileAProcessorIsFree(t *testing.T) {
	for _, tc := range []struct {
		name      string
		contended bool
		running   []int // running's answer at poll 1, 2, ... (the last one repeats)
		endAt     int   // the poll at which done turns true (0: never)
		want      bool
		polls     int
	}{
		{"a processor free: spins to the end", false, []int{1}, 50, true, 50},
		{"every processor taken: parks after the last look", false, []int{2}, 0, false, 1 + endPolls},
		{"copies take every processor later: parks then", false, []int{1, 1, 1, 2}, 0, false, 4 + endPolls},
		{"ended at the first poll", false, []int{2}, 1, true, 1},
		{"ended during the last look", false, []int{2}, 100, true, 100},
		{"contended: parks at once", true, []int{0}, 50, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := withView(2, tc.contended, allHints)
			defer restore()
			p := NewPolicy()
			p.SetBudget(time.Hour) // a spin that gives up early would hang the test
			polls := 0
			running := func() int { return tc.running[min(polls, len(tc.running))-1] }
			done := func() bool { polls++; return tc.endAt != 0 && polls >= tc.endAt }
			assert.Equal(t, tc.want, p.End(running, done))
			assert.Equal(t, tc.polls, polls)
		})
	}
}

func TestParseHints(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want Hint
	}{
		{"", allHints}, {"all", allHints}, {"plain", 0}, {"PLAIN", 0},
		{"-load", 0}, {" -load ", 0}, {"plain,load", Load}, {"-nosuch", allHints},
		{"-learn,-yield,-lure", allHints}, // hints of older releases: ignored
	} {
		if got := ParseHints(tc.v); got != tc.want {
			t.Errorf("ParseHints(%q) = %v; want %v", tc.v, got, tc.want)
		}
	}

}

// Procs follows GOMAXPROCS, capped at the CPUs the process may use, read
// once at start (runtime.NumCPU): the process's mask, not a thread's.
func TestProcsFollowsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	Refresh()
	assert.Equal(t, 1, Procs())
	runtime.GOMAXPROCS(runtime.NumCPU() + 1)
	Refresh()
	assert.Equal(t, runtime.NumCPU(), Procs(), "never more than the process's CPUs")
}

func TestUntil(t *testing.T) {
	defer ForceView(2, false)() // a free view: spins run their budget
	calls := 0
	assert.True(t, Until(0, func() bool { calls++; return true }))
	assert.Equal(t, 1, calls)
	calls = 0
	assert.False(t, Until(0, func() bool { calls++; return false }), "budget 0 polls once")
	assert.Equal(t, 1, calls)
	start := time.Now()
	assert.False(t, Until(200*time.Microsecond, func() bool { return false }))
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Microsecond, "gives up only after the budget")

	var flag atomic.Bool
	go func() {
		time.Sleep(time.Millisecond)
		flag.Store(true)
	}()
	assert.True(t, Until(time.Minute, flag.Load), "sees a condition set by another goroutine")
}

func BenchmarkGosched(b *testing.B) {
	for range b.N {
		runtime.Gosched()
	}
}

// A waiter that will spin leaves a stale view for its spin to refresh
// (Until), off its way to the wait; one that will not spin (the view says
// one processor) refreshes it in Allow, since nothing else may.
func TestAllowRefreshesOnlyWithoutSpin(t *testing.T) {
	defer SetHints(SetHints(allHints))
	defer Refresh()
	staleNext := func(procs int) int64 {
		next := int64(time.Since(start)) - int64(refreshEvery)
		view.word.Store(viewWord(procs, false))
		view.next.Store(next)
		return next
	}
	next := staleNext(7)
	assert.Equal(t, Default, Allow(Default))
	assert.Equal(t, next, view.next.Load(), "a spin follows: Allow leaves the refresh to it")
	spun := false
	Until(time.Millisecond, func() bool { r := spun; spun = true; return r && view.next.Load() != next })
	assert.NotEqual(t, next, view.next.Load(), "the spin refreshed it")
	next = staleNext(1)
	Allow(Default)
	assert.NotEqual(t, next, view.next.Load(), "no spin follows: Allow refreshed it")
}

// Backoff spins (polling 2^k times in round k), then yields until its budget
// has passed, then returns naps that double up to MaxNap; where waiters may
// not spin it starts with the yields, for Oversubscribed.
func TestBackoffStages(t *testing.T) {
	for _, crowded := range []bool{false, true} {
		restore := withView(2, crowded, allHints) // crowded by the load: the hint on
		start := time.Now()
		b := NewBackoff()
		polls, rounds := 0, 0
		var naps []time.Duration
		for len(naps) < 10 {
			before := polls
			nap := b.Next(func() bool { polls++; return false })
			switch {
			case nap > 0:
				naps = append(naps, nap)
			case polls > before:
				require.Empty(t, naps, "spun after a nap")
				require.Equal(t, 1<<rounds, polls-before, "round %d's polls", rounds)
				rounds++
			}
		}
		restore()
		budget := Default
		if crowded {
			budget = Oversubscribed
			assert.Zero(t, rounds, "spun on a crowded view")
		} else {
			assert.Equal(t, spinRounds, rounds)
		}
		assert.GreaterOrEqual(t, time.Since(start), budget, "napped before the yields' budget passed")
		assert.Equal(t, 10*time.Microsecond, naps[0])
		for i := 1; i < len(naps); i++ {
			assert.Equal(t, min(2*naps[i-1], MaxNap), naps[i], "nap %d", i)
		}
		assert.Equal(t, MaxNap, naps[len(naps)-1])
	}
}
