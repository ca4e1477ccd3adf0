package spin

import (
	"runtime"
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
	view.word.Store(viewWord(procs, contended, false))
	view.next.Store(int64(time.Hour) + int64(time.Since(start))) // no refresh during the test
	return func() {
		SetHints(old)
		Refresh()
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

func TestIdle(t *testing.T) {
	restore := withView(4, false, allHints)
	assert.Equal(t, Default, Idle(Default, &Spinner{}))
	assert.Equal(t, Default/8, Idle(Default, &Spinner{Misses: 1}))
	assert.Equal(t, time.Duration(0), Idle(Default, &Spinner{Misses: 2}))
	restore()
}

// TestLearnFollowsTheGap: a worker woken soon after it parked doubles its
// full budget (up to 2^maxBoost times the set's, never past maxLearned); one
// that slept long halves it back; without the hint nothing changes.
func TestLearnFollowsTheGap(t *testing.T) {
	restore := withView(4, false, allHints)
	defer restore()
	var sp Spinner
	for want := int16(1); want <= maxBoost; want++ {
		b := Idle(Default, &sp)
		sp.Learn(b, b) // woken one budget after parking
		assert.Equal(t, want, sp.boost)
	}
	b := Idle(Default, &sp)
	assert.Equal(t, Default<<maxBoost, b)
	assert.LessOrEqual(t, b, maxLearned)
	sp.Learn(b, b)
	assert.Equal(t, int16(maxBoost), sp.boost, "capped")
	sp.Learn(8*b, b)
	assert.Equal(t, int16(maxBoost), sp.boost, "a middling gap changes nothing")
	sp.Learn(32*b, b)
	assert.Equal(t, int16(maxBoost-1), sp.boost, "a long sleep halves the budget")
	assert.Equal(t, Default/8, Idle(Default, &Spinner{Misses: 1, boost: 3}), "a worker runs do not need is not stretched")
	var big Spinner
	big.Learn(time.Microsecond, time.Millisecond)
	assert.Zero(t, big.boost, "never past maxLearned")
	SetHints(allHints &^ Learn)
	var off Spinner
	off.Learn(time.Microsecond, Default)
	assert.Zero(t, off.boost, "without the hint nothing is learned")
}

func TestEndPolls(t *testing.T) {
	restore := withView(2, false, allHints)
	assert.Equal(t, 64, EndPolls(3))
	assert.Equal(t, -1, EndPolls(2))
	restore()
	restore = withView(2, false, allHints&^Yield)
	assert.Equal(t, -1, EndPolls(3))
	restore()
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
	assert.Equal(t, "all", allHints.String())
	assert.Equal(t, "plain", Hint(0).String())
	assert.Equal(t, "plain,load,learn", (Load | Learn).String())
	assert.Equal(t, Load|Learn, ParseHints((Load | Learn).String()), "String round-trips")
}

func TestProcsFollowsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	Refresh()
	procs, _ := Procs()
	assert.Equal(t, 1, procs)
	runtime.GOMAXPROCS(2)
	Refresh()
	procs, _ = Procs()
	assert.LessOrEqual(t, procs, 2)
	assert.GreaterOrEqual(t, procs, 1)
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

// queuedBy: goroutines waiting for a processor make the view contended once
// their count, averaged over two readings, reaches the processors (at least
// two); one passing reading does not.
func TestQueuedBy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		runnable []int
		procs    int
		want     bool
	}{
		{"none", []int{0, 0}, 2, false},
		{"one passing goroutine", []int{0, 1}, 2, false},
		{"one queued goroutine kept", []int{1, 1}, 2, false},
		{"two queued goroutines kept", []int{2, 2}, 2, true},
		{"a burst passing", []int{0, 3}, 2, false},
		{"a server's backlog", []int{16, 16}, 2, true},
		{"few on many processors", []int{16, 16}, 64, false},
		{"one per processor", []int{64, 64}, 64, true},
		{"drained again", []int{16, 16, 0, 0, 0}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := 0
			got := false
			for _, r := range tc.runnable {
				got = queuedBy(r, tc.procs, &last)
			}
			if got != tc.want {
				t.Errorf("after %v on %d procs: queued = %v; want %v", tc.runnable, tc.procs, got, tc.want)
			}
		})
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
		view.word.Store(viewWord(procs, false, false))
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
