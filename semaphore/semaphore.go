// Package semaphore provides a counting semaphore whose waiters spin for a
// bounded time before they park, the primitive workgang's dispatcher uses to
// wake workers and to wait for them.
//
// A waiter that finds no permit first spins: it polls the count, yielding the
// processor with runtime.Gosched between short bursts, until a permit appears
// or its spin budget (a duration) runs out. Only then does it park on a
// channel. Spinning turns the common case of back-to-back parallel phases into
// a hand-off of one cache line (the cost of an atomic ping-pong between two
// CPUs: 0.3-1.1 us on the 2-vCPU development VM, less on bare metal) instead
// of a scheduler wake-up (several microseconds); parking bounds the CPU an
// idle waiter burns.
//
// The package imports only the standard library.
package semaphore

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// DefaultSpin is the spin budget of a Semaphore whose budget was never set,
// when GOMAXPROCS > 1. It is a few times the cost of parking and waking a
// goroutine on a typical Linux VM, so a waiter spins about as long as a park
// would cost it (the "no worse than twice optimal" rule of spin-then-block).
const DefaultSpin = 50 * time.Microsecond

// spinBurst is the number of polls of the count between two yields (and two
// reads of the clock). A poll is a load of a cached line, so a burst lasts one
// to two microseconds: short enough that a goroutine queued behind a spinner
// is not held up for long, long enough that the yield (~100 ns) and the clock
// read (~60 ns on a VM) cost little of the spin. Measured on a 2-vCPU VM with
// an empty task: 64-poll bursts made a 2-worker run ~1.2 us, 1024-poll bursts
// ~0.67 us (go test -bench Run ./workers, burst set by a temporary knob).
const spinBurst = 1024

// Semaphore is a counting semaphore. The zero value has no permits and spins
// for the default budget before parking. A Semaphore must not be copied after
// first use.
//
// Memory model: a call of Signal is synchronized before the return of every
// Wait or successful TryWait that takes one of the permits it released.
type Semaphore struct {
	// count is the semaphore's single source of truth, updated only with
	// atomic operations (sequentially consistent in Go):
	//   count > 0: that many permits are free;
	//   count < 0: -count waiters have committed to park and are owed a
	//              wake-up token on wake, one each.
	// Spinning waiters are not counted; they take a permit only by a CAS
	// from a positive value, so they never take one owed to a parked waiter.
	count atomic.Int64

	// spin encodes the spin budget: 0 means "unset, use the default",
	// otherwise the budget is spin-1 nanoseconds.
	spin atomic.Int64

	// wake carries one token per wake-up owed to a parked waiter. It is
	// created by the first waiter that parks (the CAS from nil picks one
	// channel if several race), before that waiter commits by decrementing
	// count; a signaller loads it only after its own update of count
	// observed the commit, so it finds the channel. Keeping it behind a
	// pointer keeps the Semaphore at three words, so an embedder can fit two
	// semaphores and its own hot counters in one cache line.
	wake atomic.Pointer[chan struct{}]
}

// wakeBuffer is the capacity of the token channel. Tokens are owed only to
// waiters that have committed to park, so a full buffer only means the
// signaller waits until one of them reaches its receive; it cannot deadlock.
const wakeBuffer = 64

// SetSpin sets how long Wait spins before it parks; 0 makes it park at once.
// It panics if d is negative. It may be called at any time; waiters already
// spinning keep the budget they started with.
func (s *Semaphore) SetSpin(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("semaphore: SetSpin: negative spin budget %v", d))
	}
	s.spin.Store(int64(d) + 1) // +1 so that an explicit 0 differs from unset
}

// Spin returns the spin budget Wait uses: the one set with SetSpin or, if none
// was set, DefaultSpin, or 0 when GOMAXPROCS is 1 (spinning cannot help when
// nobody else can run at the same time).
func (s *Semaphore) Spin() time.Duration {
	if v := s.spin.Load(); v != 0 {
		return time.Duration(v - 1)
	}
	if runtime.GOMAXPROCS(0) == 1 {
		return 0
	}
	return DefaultSpin
}

// Signal releases n permits, waking up to n parked waiters. It panics if n is
// negative; Signal(0) does nothing.
func (s *Semaphore) Signal(n int) {
	if n <= 0 {
		if n < 0 {
			panic(fmt.Sprintf("semaphore: Signal: negative count %d", n))
		}
		return
	}
	// The Add publishes the permits. Its old value tells how many waiters had
	// committed to park before it (in count's modification order); exactly
	// min(n, that many) of them are owed a token by this call. A waiter that
	// commits after this Add sees the permits in its own Add's result and
	// does not park: no wake-up can be lost between the two.
	old := s.count.Add(int64(n)) - int64(n)
	if old >= 0 {
		return
	}
	s.wakeParked(min(int64(n), -old))
}

// wakeParked hands k tokens to committed waiters; kept out of Signal so the
// common no-one-parked path stays small enough to inline into callers.
func (s *Semaphore) wakeParked(k int64) {
	// The channel exists: every waiter counted in old made sure of it
	// before its Add, and our Add read the result of theirs.
	wake := *s.wake.Load()
	for ; k > 0; k-- {
		wake <- struct{}{}
	}
}

// TryWait takes a permit if one is free and reports whether it did. It never
// blocks and never takes a permit owed to a parked waiter.
func (s *Semaphore) TryWait() bool {
	for {
		// Load first: polling with a plain load keeps the line shared while
		// nothing is free, instead of pulling it exclusive with a failing CAS.
		c := s.count.Load()
		if c <= 0 {
			return false
		}
		// The CAS is the acquisition: success both takes the permit and
		// synchronizes with the Signal whose Add released it.
		if s.count.CompareAndSwap(c, c-1) {
			return true
		}
	}
}

// Wait takes a permit, spinning for the spin budget and then parking until
// one is released.
func (s *Semaphore) Wait() { s.WaitHow() }

// Acquired tells how a Wait obtained its permit.
type Acquired uint8

const (
	// Immediate: a permit was free when Wait was called.
	Immediate Acquired = iota
	// Spun: a permit was released while the waiter spun.
	Spun
	// Committed: the spin budget ran out, but a permit appeared just as the
	// waiter committed to park, so it did not park.
	Committed
	// Parked: the waiter parked and was woken by a Signal.
	Parked
)

var acquiredNames = [...]string{"Immediate", "Spun", "Committed", "Parked"}

func (a Acquired) String() string {
	if int(a) < len(acquiredNames) {
		return acquiredNames[a]
	}
	return fmt.Sprintf("Acquired(%d)", uint8(a))
}

// WaitHow is Wait, and also reports how the permit was obtained, for
// statistics (a worker counts its parks and its spins that found work).
func (s *Semaphore) WaitHow() Acquired {
	if s.TryWait() {
		return Immediate
	}
	return s.waitSlow(nil, s.Spin())
}

// waitSlow is the part of every wait after a failed TryWait: spin for budget
// (bursts adapted in sp, if not nil), then park.
func (s *Semaphore) waitSlow(sp *Spinner, budget time.Duration) Acquired {
	if budget > 0 && s.spinFor(budget, sp) {
		return Spun
	}
	return s.park()
}

// park commits to waiting and blocks until a permit is handed over.
func (s *Semaphore) park() Acquired {
	wake := s.wakeChan()
	// Commit: after this Add we either own a permit (result >= 0) or are
	// counted as a parked waiter that the next Signal(s) must hand a token.
	if s.count.Add(-1) >= 0 {
		return Committed
	}
	// The token's send is synchronized before this receive completes, and it
	// was sent after the signaller's Add released our permit.
	<-wake
	return Parked
}

// wakeChan returns the token channel, creating it on first use.
func (s *Semaphore) wakeChan() chan struct{} {
	if p := s.wake.Load(); p != nil {
		return *p
	}
	ch := make(chan struct{}, wakeBuffer)
	if s.wake.CompareAndSwap(nil, &ch) {
		return ch
	}
	return *s.wake.Load() // another waiter installed one first
}

// Spinner is one waiter's adaptive spin state: how many polls it makes
// between two yields. The zero value starts at the longest burst. A Spinner
// belongs to one goroutine (or to goroutines that hand it over with a
// happens-before edge); pass it to WaitWith on every wait of that goroutine.
//
// Why adapt: a spinner yields between bursts so that the goroutine it waits
// for can run. When the two share a processor (GOMAXPROCS=1, more spinners
// than Ps, or another process holding the other CPU), every hand-off waits
// for the spinner's burst to end, so long bursts make each hand-off cost a
// burst (about 1.5 us) instead of a yield (about 0.1 us). A waiter that finds
// its permit right after a yield that took noticeably longer than a bare
// yield (something else ran on its processor meanwhile: most likely the
// signaller) shortens its bursts; one that finds it mid-burst, or after a
// quick yield, lengthens them again.
type Spinner struct {
	burst int32 // polls per burst; 0 means maxBurst
}

const (
	maxBurst = spinBurst
	minBurst = 1
	// longYield is how long a runtime.Gosched must take for the waiter to
	// conclude that another goroutine ran on its processor: a bare yield
	// (nothing else runnable) cost 99-101 ns on the 2-vCPU development VM,
	// AMD EPYC, Go 1.26.8 (a testing.B loop of runtime.Gosched), so 500 ns
	// leaves room for noise while staying below a same-P goroutine switch
	// plus the other goroutine's work.
	longYield = 500 * time.Nanosecond
)

// Burst returns the number of polls between two yields the Spinner uses now.
func (sp *Spinner) Burst() int {
	if sp == nil || sp.burst == 0 {
		return maxBurst
	}
	return int(sp.burst)
}

func (sp *Spinner) adapt(sharedP bool) {
	if sp == nil {
		return
	}
	b := sp.Burst()
	if sharedP {
		b = max(b/4, minBurst)
	} else {
		b = min(b*2, maxBurst)
	}
	if int32(b) != sp.burst { // write only on change: the Spinner may share a line
		sp.burst = int32(b)
	}
}

// WaitWith is WaitHow with a spin budget for this call only (instead of the
// semaphore's own, for a waiter that knows better how long spinning can pay,
// for example one whose spinning would take a processor from the goroutines
// it waits for) and an adaptive burst length kept in sp (nil: fixed bursts).
// It panics if budget is negative.
func (s *Semaphore) WaitWith(sp *Spinner, budget time.Duration) Acquired {
	if budget < 0 {
		panic(fmt.Sprintf("semaphore: WaitWith: negative spin budget %v", budget))
	}
	if s.TryWait() {
		return Immediate
	}
	return s.waitSlow(sp, budget)
}

// spinFor polls for a permit for about budget, yielding between bursts so that
// other goroutines (possibly the one that will signal) can run on this P, even
// with GOMAXPROCS=1 or more spinners than Ps.
func (s *Semaphore) spinFor(budget time.Duration, sp *Spinner) bool {
	start := time.Now()
	burst := sp.Burst()
	for {
		for range burst {
			if s.TryWait() {
				sp.adapt(false)
				return true
			}
		}
		before := time.Now()
		runtime.Gosched()
		now := time.Now()
		if s.TryWait() {
			sp.adapt(now.Sub(before) > longYield)
			return true
		}
		if now.Sub(start) >= budget {
			return false
		}
	}
}
