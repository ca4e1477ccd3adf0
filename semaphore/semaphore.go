// Package semaphore provides a counting semaphore whose waiters spin for a
// bounded time before they park.
//
// A waiter that finds no permit first spins: it polls the count, yielding the
// processor with runtime.Gosched between short bursts, until a permit appears
// or its spin budget (a duration) runs out. Only then does it park on a
// channel. Spinning turns a quick hand-off into the transfer of one cache
// line instead of a scheduler wake-up; parking bounds the CPU an idle waiter
// burns. docs/perf.md has the figures (BenchmarkHandoff in perf/semcmp,
// against x/sync's Weighted and a channel).
//
// workgang's dispatcher (package gang) parks its idle workers and its
// coordinator on semaphores of this package, with a spin budget of 0: it spins
// in its own loop first, where the spin follows demand. The package imports
// the standard library and the module's internal spin policy.
package semaphore

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/internal/spin"
)

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
// Like every spin of the module, it stops early while the wait policy lets
// no waiter spin (one processor, or other processes' threads waiting for the
// CPUs: package internal/spin). It panics if d is negative. It may be called
// at any time; waiters already spinning keep the budget they started with.
func (s *Semaphore) SetSpin(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("semaphore: SetSpin: negative spin budget %v", d))
	}
	s.spin.Store(int64(d) + 1) // +1 so that an explicit 0 differs from unset
}

// spinBudget returns the spin budget Wait uses: the one set with SetSpin or,
// if none was set, 50 us, or 0 with one processor (GOMAXPROCS or the CPUs:
// spinning cannot help when nobody else can run at the same time) or while
// other processes' threads wait for the machine's CPUs (see WORKGANG_WAIT in
// the README).
func (s *Semaphore) spinBudget() time.Duration {
	if v := s.spin.Load(); v != 0 {
		return time.Duration(v - 1)
	}
	// The module's wait policy: 50 us, or 0 with one processor or
	// on a machine whose CPUs other processes are waiting for.
	return spin.Budget()
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
	// The CAS publishes the permits. Its old value tells how many waiters
	// had committed to park before it (in count's modification order);
	// exactly min(n, that many) of them are owed a token by this call. A
	// waiter that commits after this CAS sees the permits in its own Add's
	// result and does not park: no wake-up can be lost between the two. It
	// is a CAS rather than an Add so that a count that would overflow is
	// refused before anything changes.
	for {
		old := s.count.Load()
		if old > math.MaxInt64-int64(n) {
			panic(fmt.Sprintf("semaphore: Signal(%d): count would overflow (%d permits free)", n, old))
		}
		if !s.count.CompareAndSwap(old, old+int64(n)) {
			continue
		}
		if old < 0 {
			s.wakeParked(min(int64(n), -old))
		}
		return
	}
}

// wakeParked hands k tokens to committed waiters; kept out of Signal so the
// common no-one-parked path stays small enough to inline into callers.
func (s *Semaphore) wakeParked(k int64) {
	// The channel exists: every waiter counted in Signal's old value made
	// sure of it before its Add, and Signal's successful CAS read the
	// result of those Adds, so it is ordered after them.
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
		// synchronizes with the Signal whose CAS released it.
		if s.count.CompareAndSwap(c, c-1) {
			return true
		}
	}
}

// Wait takes a permit, spinning for the spin budget and then parking until
// one is released.
func (s *Semaphore) Wait() {
	if s.TryWait() {
		return
	}
	if budget := s.spinBudget(); budget > 0 && spin.Until(budget, s.TryWait) {
		return
	}
	s.park()
}

// park commits to waiting and blocks until a permit is handed over.
func (s *Semaphore) park() {
	wake := s.wakeChan()
	// Commit: after this Add we either own a permit (result >= 0) or are
	// counted as a parked waiter that the next Signal(s) must hand a token.
	if s.count.Add(-1) >= 0 {
		return
	}
	// The token's send is synchronized before this receive completes, and it
	// was sent after the signaller's CAS released our permit.
	<-wake
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
