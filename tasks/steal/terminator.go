package steal

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/spin"
)

// Terminator decides when a stealing phase is over: when all n workers have
// run out of work at the same time. A worker of Set.Drain that found its own
// stack and deque empty and failed to steal offers termination (HotSpot's
// offer_termination; Offer below). The offers return true, in every worker,
// only once all n workers are offering together (or the phase was aborted).
// When work shows up in a queue while workers wait in Offer, they return false
// and go back to stealing, though not at once: the spin master notices the
// work within its poll period (microseconds while it spins or yields, at most
// spin.MaxNap once it naps), and the sleepers through the chain of wake-ups that
// the master starts when it leaves (see Waiting).
//
// Create one with NewTerminator and hand it to every worker's Set.Drain.
// Reset it between phases (never during one). A Terminator must not be copied
// after first use.
//
// Correctness rests on one invariant: a worker offers only when it holds no
// work (its queue is empty and it is not processing a value), and it withdraws
// its offer before it takes work again. So while all n have offered, nobody
// holds or can produce work, every queue is empty, and the phase is over for
// good: the count of offers, once it reaches n, is never decreased.
//
// Memory model: when the phase terminates because all n workers offered,
// every worker's actions before its Offer are synchronized before the return
// of every Offer that returns true (all offers are read-modify-writes of one
// counter, and the one that completes it is read by every Offer that returns
// true for that reason). Abort is the exception: an Offer that returns true
// because of an abort is synchronized only after the Abort call it observed,
// and other workers may still be running, or processing values, when it
// returns (Aborted tells the two cases apart).
//
// # Waiting
//
// An offering worker waits in three stages, like HotSpot's TaskTerminator
// (spin.Backoff, in the module's one wait policy): it spins, polling with
// pauses that double in length; then it yields the processor
// (runtime.Gosched) until about spin.Default has passed; then it sleeps.
// Where the policy lets no waiter spin (one processor, or other processes'
// threads waiting for the CPUs) it skips the spinning and yields only for
// spin.Oversubscribed: its processor is better spent on the workers that
// hold work. It reads the policy's view as each wait starts.
//
// Only one waiter at a time, the spin master, polls the queues; the others
// sleep until it wakes them. When the master sees work, it withdraws its
// offer, wakes one sleeper and returns false; the woken one either finds work
// too (withdraws, wakes the next sleeper, returns false) or becomes the next
// master, so a burst of work wakes the sleepers one after another and a
// sleeper is never left without a master. The master's own sleep is a timed
// nap that grows to spin.MaxNap, so work that appears while every waiter sleeps is
// noticed within spin.MaxNap; the offer that completes termination, and Abort,
// wake every sleeper at once.
type Terminator struct {
	// offered counts workers that have offered and not withdrawn. Its own
	// line: waiters poll it while spinning.
	_       pad.Line
	offered atomic.Int32
	_       [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Int32{})]byte

	// master is set while one waiter is the spin master; sleeping counts
	// waiters that committed to block on wake (the master counts while it
	// naps). Written by waiters: their own line.
	waiterLine
	_ [uintptr(pad.CacheLine) - unsafe.Sizeof(waiterLine{})]byte

	// The rest is read-mostly. aborted ends the phase without the offers
	// (see Abort); it is stored at most once a phase, and workers that hold
	// work load it every few values (Set.Drain), so it is kept off the
	// waiters' line.
	aborted atomic.Bool
	n       int32
	hasWork func() bool
	// wake holds tokens for sleepers, capacity n. Tokens may be stale (sent
	// to a waiter that then left without receiving); a stale token causes
	// one spurious wake-up, which re-checks and sleeps again. It is never
	// lost: a send finds room or the buffer already holds n tokens, more
	// than there are sleepers.
	wake chan struct{}
	// nap is the master's timer; only the master (the holder of the master
	// flag) touches it.
	nap *time.Timer
}

// waiterLine is the Terminator's line written by waiters (see there).
type waiterLine struct {
	master   atomic.Bool
	sleeping atomic.Int32
}

// NewTerminator returns a Terminator for n workers; hasWork reports whether
// any queue may hold work, and is called only by waiters (Set.HasWork is the
// usual choice). It panics if n is outside [1, 1<<30] or hasWork is nil.
func NewTerminator(n int, hasWork func() bool) *Terminator {
	if n < 1 || n > maxWorkers {
		panic(fmt.Sprintf("steal: NewTerminator: n = %d out of range [1, %d]", n, maxWorkers))
	}
	if hasWork == nil {
		panic("steal: NewTerminator: nil hasWork")
	}
	t := &Terminator{n: int32(n), hasWork: hasWork, wake: make(chan struct{}, n)}
	t.nap = time.NewTimer(time.Hour)
	t.nap.Stop()
	return t
}

// maxWorkers bounds n so that the int32 counts have room to spare above n,
// where Offer detects offers in excess.
const maxWorkers = 1 << 30

// workers returns n, the number of workers that must offer.
func (t *Terminator) workers() int { return int(t.n) }

// Aborted reports whether Abort was called in this phase.
func (t *Terminator) Aborted() bool { return t.aborted.Load() }

// done reports whether waiters should return true.
func (t *Terminator) done() bool { return t.offered.Load() == t.n || t.aborted.Load() }

// Abort ends the phase for every worker: Drain returns soon (see Set.Drain)
// and Offer returns true from now on, in waiting workers and in later calls,
// whether or not work is left. A worker
// that fails (for example, its processing panics) calls it so that its
// siblings stop waiting for an offer that will never come; without it they
// would wait forever, and so would the run that waits for them. Set.Drain
// aborts when process panics.
func (t *Terminator) Abort() {
	// Store, then load sleeping: the same commit-then-recheck pairing as
	// the offer that completes termination (see wait).
	t.aborted.Store(true)
	t.wakeAll()
}

// Reset prepares the Terminator for a new phase. It must not be called while
// any worker is inside Offer: call it between runs. After an aborted phase,
// Clear the Set too (see Set.Clear).
func (t *Terminator) Reset() {
	t.offered.Store(0)
	t.aborted.Store(false)
	t.master.Store(false)
	t.sleeping.Store(0)
	for {
		select {
		case <-t.wake: // drop stale tokens of the last phase
		default:
			return
		}
	}
}

// offer (Offer in the documentation above) offers termination on behalf of
// a worker that holds no work. It
// returns true when all workers have offered (the phase is over: return from
// the phase) or the phase was aborted, and false when some queue showed work
// (try to steal again). A worker that got false has withdrawn its offer and
// must offer again before the phase can end.
//
// A worker that got true must not offer again before Reset, unless the phase
// was aborted: Offer panics when the offers would outnumber the workers, as
// they do then (or when more than n workers offer), instead of waiting
// forever for a count of n that is already past.
func (t *Terminator) offer() bool {
	// The Add both counts the offer and, in the worker that completes the
	// count, observes every other offer (it reads the result of all the
	// earlier Adds in the counter's modification order).
	c := t.offered.Add(1)
	if c == t.n {
		t.wakeAll()
		return true
	}
	if t.aborted.Load() {
		// Before the excess check: after an abort, offers need not be
		// balanced (a worker that returned true because of it keeps its
		// offer counted and may offer again).
		return true
	}
	if c > t.n {
		panic(fmt.Sprintf("steal: Terminator: %d offers, n = %d: Drain called again after the phase terminated (Reset the Terminator first), or by more than n workers", c, t.n))
	}
	return t.wait()
}

// wait is Offer's slow path: take turns as spin master or sleeper until the
// phase ends or work shows up.
func (t *Terminator) wait() bool {
	for {
		if t.master.CompareAndSwap(false, true) {
			return t.spinMaster()
		}
		// Commit to sleep, then re-check what would wake us. Two kinds of
		// waker publish a condition and then load sleeping: the offer that
		// completes the count and Abort (offered == n or aborted, then
		// wakeAll), and a departing master (master = false, then
		// releaseMaster). We store sleeping and then load the conditions.
		// With sequentially consistent atomics one of us sees the other's
		// write: the waker counts us and sends a token, or we see the
		// condition and do not block.
		//
		// Work in a queue is not such a condition: no pusher looks at
		// sleeping (a push publishes with one store and wakes nobody).
		// What guarantees that work is noticed is the recheck of master:
		// we block only if we saw master set after our commit, so a master
		// exists, and its clearing of master comes after our load. It polls
		// hasWork at least every spin.MaxNap (its naps are timed); when it
		// leaves for the work, it clears master and then loads sleeping,
		// which by then counts us, and wakes one sleeper. That one finds
		// the work too and passes the wake-up on (passOn), or becomes the
		// next master; so every sleeper is reached. (A master that leaves
		// because the phase ended relies on the wakeAll of the offer or
		// Abort that ended it, as above.) The hasWork recheck below is only
		// a shortcut: it saves a sleep when the work is already visible.
		t.sleeping.Add(1)
		if t.done() || !t.master.Load() || t.hasWork() {
			t.sleeping.Add(-1)
		} else {
			<-t.wake
			t.sleeping.Add(-1)
		}
		if t.done() {
			return true
		}
		if t.hasWork() {
			done := t.withdraw()
			if !done {
				t.passOn()
			}
			return done
		}
	}
}

// passOn is called by a sleeper that leaves to steal: if others still sleep
// and nobody is master, it wakes one more. So a burst of work wakes sleepers
// one after another, each woken one either leaving for work too (and waking
// the next) or becoming the master; no sleeper is left without a master.
func (t *Terminator) passOn() {
	if t.sleeping.Load() > 0 && !t.master.Load() {
		t.signal(1)
	}
}

// withdraw takes back this worker's offer because a queue showed work. It
// returns false when the offer was withdrawn, and true when termination won
// the race: the count reached n first, which is final (the hasWork answer was
// stale: with every worker offering, no queue can hold work).
func (t *Terminator) withdraw() (done bool) {
	for {
		c := t.offered.Load()
		if c == t.n {
			return true
		}
		// The CAS keeps "reached n" final: we decrement only from a value
		// below n, so an Offer that saw n is never contradicted.
		if t.offered.CompareAndSwap(c, c-1) {
			return false
		}
	}
}

// spinMaster polls for termination or work in the wait policy's stages
// (spin.Backoff: spin, yield, then nap).
func (t *Terminator) spinMaster() bool {
	b := spin.NewBackoff()
	for {
		if nap := b.Next(t.done); nap > 0 {
			t.napFor(nap)
		}
		if t.done() {
			t.master.Store(false)
			return true
		}
		if t.hasWork() {
			done := t.withdraw()
			t.releaseMaster(done)
			return done
		}
	}
}

// napFor sleeps for d or until woken, counted as a sleeper so that the offer
// that completes termination or a departing master wakes it.
func (t *Terminator) napFor(d time.Duration) {
	t.sleeping.Add(1)
	// Same commit-then-recheck as in wait for the phase's end. Work that
	// no recheck sees is noticed when the timer fires, within d; the
	// hasWork recheck only saves the nap when the work is already visible.
	if !t.done() && !t.hasWork() {
		t.nap.Reset(d)
		select {
		case <-t.wake:
		case <-t.nap.C:
		}
		// Since Go 1.23 a stopped timer delivers no stale tick later.
		t.nap.Stop()
	}
	t.sleeping.Add(-1)
}

// releaseMaster gives up the master role and wakes sleepers: all of them when
// the phase is over, otherwise at least one, which either finds the work too or
// becomes the next master, so that a sleeper is never left without a master.
func (t *Terminator) releaseMaster(done bool) {
	// Store before loading sleeping (see wait): a waiter that commits after
	// our load sees master == false and does not block.
	t.master.Store(false)
	if done {
		t.wakeAll()
		return
	}
	if t.sleeping.Load() > 0 {
		t.signal(1)
	}
}

// wakeAll wakes every committed sleeper; called after offered reached n or
// aborted was set.
func (t *Terminator) wakeAll() {
	// Loaded after the Add that made offered == n (or the store of
	// aborted): see wait for why no sleeper is missed.
	if k := t.sleeping.Load(); k > 0 {
		t.signal(int(k))
	}
}

// signal sends up to k tokens without blocking; a full buffer already holds a
// token for every possible sleeper.
func (t *Terminator) signal(k int) {
	for range k {
		select {
		case t.wake <- struct{}{}:
		default:
			return
		}
	}
}
