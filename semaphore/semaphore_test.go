package semaphore

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
	defaultWant := DefaultSpin
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
			if got := s.Spin(); got != tc.want {
				t.Errorf("Spin() = %v; want %v", got, tc.want)
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

func TestWaitHow(t *testing.T) {
	var s Semaphore
	s.Signal(1)
	assert.Equal(t, Immediate, s.WaitHow())

	s.SetSpin(time.Minute) // spins until the permit arrives
	go func() {
		time.Sleep(time.Millisecond)
		s.Signal(1)
	}()
	assert.Equal(t, Spun, s.WaitHow())

	s.SetSpin(0)
	go func() {
		for s.count.Load() != -1 {
			runtime.Gosched()
		}
		s.Signal(1)
	}()
	assert.Equal(t, Parked, s.WaitHow())
	assert.Equal(t, "Parked", Parked.String())
	assert.Equal(t, "Acquired(9)", Acquired(9).String())
}

func TestSpinnerAdapts(t *testing.T) {
	var sp Spinner
	assert.Equal(t, maxBurst, sp.Burst(), "zero value starts at the longest burst")
	var got []int
	for range 7 {
		sp.adapt(true) // permit found after a long yield: shorten
		got = append(got, sp.Burst())
	}
	assert.Equal(t, []int{256, 64, 16, 4, 1, 1, 1}, got)
	got = got[:0]
	for range 12 {
		sp.adapt(false) // found mid-burst or after a quick yield: lengthen
		got = append(got, sp.Burst())
	}
	assert.Equal(t, []int{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024, 1024}, got)
	var nilSp *Spinner
	assert.NotPanics(t, func() { nilSp.adapt(true) })
	assert.Equal(t, maxBurst, nilSp.Burst())
}

func TestWaitWith(t *testing.T) {
	var s Semaphore
	assert.PanicsWithValue(t, "semaphore: WaitWith: negative spin budget -1ns", func() { s.WaitWith(nil, -1) })
	s.Signal(1)
	var sp Spinner
	assert.Equal(t, Immediate, s.WaitWith(&sp, 0))
	go func() {
		for s.count.Load() != -1 {
			runtime.Gosched()
		}
		s.Signal(1)
	}()
	assert.Equal(t, Parked, s.WaitWith(&sp, 0), "budget 0 parks at once")
}
