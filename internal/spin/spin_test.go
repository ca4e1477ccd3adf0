package spin

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// An idle worker spins the set's budget while runs need it, an eighth after
// one run that did not, nothing after two; a contended view or one processor
// cuts every budget to 0.
func TestIdleBudgets(t *testing.T) {
	restore := withView(4, false, allHints)
	defer restore()
	p := NewPolicy()
	p.SetBudget(time.Hour) // a spin that gives up early would hang the test
	var w Waiter
	spins := func(needed bool) (polls int) {
		p.Idle(&w, needed, func() bool { polls++; return polls > 3 })
		return polls
	}
	assert.Equal(t, 4, spins(true), "needed: spins until done")
	assert.Equal(t, 4, spins(false), "one miss: still spins (an eighth of an hour)")
	assert.Equal(t, 1, spins(false), "two misses: polls once and parks")
	assert.Equal(t, 4, spins(true), "needed again: full budget")
	view.word.Store(viewWord(4, true))
	assert.Equal(t, 1, spins(true), "contended: no spin")
	view.word.Store(viewWord(1, false))
	assert.Equal(t, 1, spins(true), "one processor: no spin")
}

// TestLearnFollowsTheGap: a worker woken soon after it parked doubles its
// budget (up to 2^maxBoost times the set's, never past maxLearned); one that
// slept long halves it back; without the hint, or after a run that did not
// need the worker, nothing changes.
func TestLearnFollowsTheGap(t *testing.T) {
	restore := withView(4, false, allHints)
	defer restore()
	p := NewPolicy()
	p.SetBudget(time.Microsecond)
	var w Waiter
	never := func() bool { return false }
	wokeAfter := func(slept time.Duration) {
		p.Idle(&w, true, never)
		w.parkedAt = int64(time.Since(start) - slept)
		p.Woken(&w)
	}
	for want := int16(1); want <= maxBoost; want++ {
		wokeAfter(0)
		assert.Equal(t, want, w.boost)
	}
	wokeAfter(0)
	assert.Equal(t, int16(maxBoost), w.boost, "capped")
	wokeAfter(time.Microsecond << maxBoost * 8)
	assert.Equal(t, int16(maxBoost), w.boost, "a middling gap changes nothing")
	wokeAfter(time.Microsecond << maxBoost * 32)
	assert.Equal(t, int16(maxBoost-1), w.boost, "a long sleep halves the budget")

	p.Idle(&w, false, never)
	w.parkedAt = int64(time.Since(start))
	p.Woken(&w)
	assert.Equal(t, int16(maxBoost-1), w.boost, "not needed: nothing learned")

	big := NewPolicy()
	big.SetBudget(time.Millisecond)
	var b Waiter
	big.Idle(&b, true, never)
	b.parkedAt = int64(time.Since(start))
	big.Woken(&b)
	assert.Zero(t, b.boost, "never past maxLearned")

	SetHints(allHints &^ Learn)
	var off Waiter
	p.Idle(&off, true, never)
	off.parkedAt = int64(time.Since(start))
	p.Woken(&off)
	assert.Zero(t, off.boost, "without the hint nothing is learned")
}

// The coordinator of a plain run that outnumbers the processors yields once
// when a copy is still unclaimed after its polls (hint Yield), and the copy
// that ends the run yields back; with every copy claimed, with a caller-runs
// run, or without the hint, it does not.
func TestEndYieldsOnlyForAnUnclaimedCopy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hints      Hint
		goroutines int
		pending    bool
		want       bool
	}{
		{"outnumbered, a copy unclaimed", allHints, 3, true, true},
		{"outnumbered, every copy claimed", allHints, 3, false, false},
		{"fits the processors", allHints, 2, true, false},
		{"caller-runs", allHints, 0, true, false},
		{"hint off", allHints &^ Yield, 3, true, false},
		{"contended: parks at once", allHints, 3, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := withView(2, strings.HasPrefix(tc.name, "contended"), tc.hints)
			defer restore()
			p := NewPolicy()
			p.SetBudget(time.Microsecond) // a coordinator that would spin
			asked := 0
			p.End(7, tc.goroutines, func() bool { return false }, func() bool { asked++; return tc.pending })
			if got := p.yielded.Load() == 7; got != tc.want {
				t.Errorf("yielded = %v; want %v (pending asked %d times)", got, tc.want, asked)
			}
		})
	}
}

func TestParseHints(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want Hint
	}{
		{"", allHints}, {"all", allHints}, {"plain", 0}, {"PLAIN", 0},
		{"-learn", allHints &^ Learn}, {"-learn, -yield", allHints &^ (Learn | Yield)},
		{"plain,load", Load}, {"-nosuch", allHints},
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
