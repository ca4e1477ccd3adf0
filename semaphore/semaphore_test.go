package semaphore

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/spin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestZeroValueHasNoPermits(t *testing.T) {
	var s Semaphore
	assert.False(t, s.TryWait(), "zero value: TryWait got a permit")
	s.Signal(2)
	assert.True(t, s.TryWait())
	assert.True(t, s.TryWait())
	assert.False(t, s.TryWait(), "took more permits than were signalled")
	s.Signal(0)
	assert.False(t, s.TryWait(), "Signal(0) released a permit")
	assert.Equal(t, int64(0), s.count.Load())
}

func TestMisusePanics(t *testing.T) {
	var s Semaphore
	assert.PanicsWithValue(t, "semaphore: Signal: negative count -3", func() { s.Signal(-3) })
	assert.PanicsWithValue(t, "semaphore: SetSpin: negative spin budget -1µs", func() { s.SetSpin(-time.Microsecond) })
}

func TestSpinBudget(t *testing.T) {
	// The policy's view fixed at this process's processors, no other
	// process waiting: its answer, not the machine's load, is under test.
	defer spin.ForceView(runtime.GOMAXPROCS(0), false)()
	defaultWant := spin.Default
	if runtime.GOMAXPROCS(0) == 1 {
		defaultWant = 0
	}
	for _, tc := range []struct {
		name string
		set  *time.Duration
		want time.Duration
	}{
		{"unset", nil, defaultWant},
		{"zero parks at once", ptr(0), 0},
		{"one nanosecond", ptr(1), 1},
		{"ten microseconds", ptr(10 * time.Microsecond), 10 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Semaphore
			if tc.set != nil {
				s.SetSpin(*tc.set)
			}
			if got := s.spinBudget(); got != tc.want {
				t.Errorf("spinBudget() = %v; want %v", got, tc.want)
			}
		})
	}
}

func ptr(d time.Duration) *time.Duration { return &d }

// TestWaitParksUntilSignal checks the parking path: a waiter with no spin
// budget commits (count goes negative) and returns only after a Signal.
func TestWaitParksUntilSignal(t *testing.T) {
	var s Semaphore
	s.SetSpin(0)
	done := make(chan struct{})
	go func() { s.Wait(); close(done) }()
	require.Eventually(t, func() bool { return s.count.Load() == -1 }, 5*time.Second, time.Millisecond,
		"waiter never committed to park")
	select {
	case <-done:
		t.Fatal("Wait returned before any Signal")
	default:
	}
	assert.False(t, s.TryWait(), "TryWait took a permit owed to a parked waiter")
	s.Signal(1)
	<-done
	assert.Equal(t, int64(0), s.count.Load())
}

// TestSignalWakesOnlyOwed checks the arithmetic of Signal against parked
// waiters: with two parked, Signal(3) wakes both and leaves one free permit.
func TestSignalWakesOnlyOwed(t *testing.T) {
	var s Semaphore
	s.SetSpin(0)
	var woke sync.WaitGroup
	woke.Add(2)
	for range 2 {
		go func() { s.Wait(); woke.Done() }()
	}
	require.Eventually(t, func() bool { return s.count.Load() == -2 }, 5*time.Second, time.Millisecond)
	s.Signal(3)
	woke.Wait()
	assert.True(t, s.TryWait(), "the third permit should be free")
	assert.False(t, s.TryWait())
}

// TestNoLostWakeup runs many producers and consumers with several spin
// budgets; every permit signalled must be taken by exactly one Wait, and the
// run must finish (a lost wake-up would hang it; the test binary's timeout
// catches that).
func TestNoLostWakeup(t *testing.T) {
	for _, spin := range []time.Duration{0, time.Microsecond, 20 * time.Microsecond} {
		for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
			t.Run(fmt.Sprintf("spin=%v/procs=%d", spin, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				var s Semaphore
				s.SetSpin(spin)
				const producers, consumers, perConsumer = 3, 5, 2000
				total := consumers * perConsumer
				var taken atomic.Int64
				var wg sync.WaitGroup
				for range consumers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range perConsumer {
							s.Wait()
							taken.Add(1)
						}
					}()
				}
				for p := range producers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						share := total / producers
						if p == producers-1 {
							share += total % producers
						}
						for share > 0 {
							k := min(share, 1+p) // mix Signal(1), Signal(2), Signal(3)
							s.Signal(k)
							share -= k
						}
					}()
				}
				wg.Wait()
				assert.Equal(t, int64(total), taken.Load())
				assert.Equal(t, int64(0), s.count.Load(), "permits left over or owed")
				assert.False(t, s.TryWait())
			})
		}
	}
}

// TestTryWaitNeverOversubscribes races TryWait against Signal: the number of
// successful TryWaits can never exceed the permits released.
func TestTryWaitNeverOversubscribes(t *testing.T) {
	var s Semaphore
	const released = 10000
	var got atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if s.TryWait() {
					got.Add(1)
				}
			}
		}()
	}
	for range released {
		s.Signal(1)
	}
	for s.count.Load() > 0 {
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, int64(released), got.Load())
}

func TestWaitSpinsThenParks(t *testing.T) {
	defer spin.ForceView(2, false)() // a free view: the policy lets it spin
	var s Semaphore
	s.SetSpin(time.Minute) // spins until the permit arrives: never commits to park
	go func() {
		time.Sleep(time.Millisecond)
		s.Signal(1)
	}()
	s.Wait()
	assert.Nil(t, s.wake.Load(), "a waiter that found its permit while spinning never made the token channel")

	s.SetSpin(0)
	go func() {
		for s.count.Load() != -1 { // the waiter committed to park
			runtime.Gosched()
		}
		s.Signal(1)
	}()
	s.Wait()
	assert.NotNil(t, s.wake.Load(), "a budget of 0 parks at once")
	assert.Zero(t, s.count.Load())
}

// TestSignalOverflow: a Signal that would overflow the count panics and
// leaves the semaphore as it was, usable.
func TestSignalOverflow(t *testing.T) {
	// The count is an int64 and Signal takes an int: with a 32-bit int no
	// single Signal reaches the count's limit from 0, so the semaphore
	// starts with base permits free, exactly one Signal(MaxInt) short of
	// it (base is 0 where int has 64 bits). Stored directly: 2^32 Signals
	// would take too long.
	const base = math.MaxInt64 - math.MaxInt
	var s Semaphore
	s.count.Store(base + 1)
	assert.PanicsWithValue(t, fmt.Sprintf("semaphore: Signal(%d): count would overflow (%d permits free)", math.MaxInt, int64(base+1)),
		func() { s.Signal(math.MaxInt) })
	assert.Equal(t, int64(base+1), s.count.Load(), "state unchanged")
	assert.True(t, s.TryWait())
	assert.Equal(t, int64(base), s.count.Load(), "the refused Signal added no permits")
	s.Signal(math.MaxInt) // exactly fits
	assert.PanicsWithValue(t, fmt.Sprintf("semaphore: Signal(1): count would overflow (%d permits free)", int64(math.MaxInt64)),
		func() { s.Signal(1) })
	assert.True(t, s.TryWait())
	s.Signal(1)
	assert.Equal(t, int64(math.MaxInt64), s.count.Load())
}
