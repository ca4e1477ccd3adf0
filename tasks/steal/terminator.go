package steal

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// Terminator decides when a stealing phase is over: when all n workers have
// run out of work at the same time. A worker that found its own queue empty and
// failed to steal calls Offer. Offer returns true, in every worker, only once
// all n workers are offering together; it returns false as soon as some queue
// shows work again, and the worker goes back to stealing.
//
// Create one with NewTerminator. Reset it between phases (never during one).
// A Terminator must not be copied after first use.
//
// Correctness rests on one invariant: a worker offers only when it holds no
// work (its queue is empty and it is not processing a value), and it withdraws
// its offer before it takes work again. So while all n have offered, nobody
// holds or can produce work, every queue is empty, and the phase is over for
// good: the count of offers, once it reaches n, is never decreased.
//
// Memory model: every worker's actions before its Offer are synchronized
// before the return of every Offer that returns true (all offers are
// read-modify-writes of one counter, and the one that completes it is read by
// every Offer that returns true).
//
// # Waiting
//
// An offering worker waits in three stages, like HotSpot's TaskTerminator: it
// spins, polling with pauses that double in length; then it yields the
// processor (runtime.Gosched) for about SpinBudget; then it sleeps. When the
// workers outnumber GOMAXPROCS (or GOMAXPROCS is 1) it skips the spinning and
// yields for a tenth of the budget: its processor is better spent on the
// workers that hold work.
//
// Only one waiter at a time, the spin master, polls the queues; the others
// sleep until it wakes them. When the master sees work, it withdraws its
// offer, wakes one sleeper and returns false; the woken one either finds work
// too (withdraws, wakes the next sleeper, returns false) or becomes the next
// master, so a burst of work wakes the sleepers one after another and a
// sleeper is never left without a master. The master's own sleep is a timed
// nap that grows to MaxNap, so work that appears while every waiter sleeps is
// noticed within MaxNap; the offer that completes termination wakes every
// sleeper at once.
type Terminator struct {
	// offered counts workers that have offered and not withdrawn. Its own
	// line: waiters poll it while spinning.
	_       [cacheLine]byte
	offered atomic.Int32
	_       [cacheLine - 4]byte

	// master is set while one waiter is the spin master; sleeping counts
	// waiters that committed to block on wake (the master counts while it
	// naps).
	master   atomic.Bool
	sleeping atomic.Int32
	// aborted ends the phase without the offers (see Abort).
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

// SpinBudget is about how long an offering worker spins and yields, in all,
// before it sleeps: about the cost of a sleep and wake-up, so that a worker
// waiting for work that arrives later loses at most twice the optimum.
const SpinBudget = 50 * time.Microsecond

// MaxNap is the longest nap of the spin master between two looks at the
// queues, once it has stopped spinning.
const MaxNap = time.Millisecond

// spinRounds is the number of spin rounds; round k polls 2^k times, so a
// spin stage polls about 2^spinRounds times in all (a few microseconds).
const spinRounds = 12

// NewTerminator returns a Terminator for n workers; hasWork reports whether
// any queue may hold work, and is called only by waiters (Set.HasWork is the
// usual choice). It panics if n < 1 or hasWork is nil.
func NewTerminator(n int, hasWork func() bool) *Terminator {
	if n < 1 || n > 1<<30 {
		panic(fmt.Sprintf("steal: NewTerminator: n = %d, want >= 1", n))
	}
	if hasWork == nil {
		panic("steal: NewTerminator: nil hasWork")
	}
	t := &Terminator{n: int32(n), hasWork: hasWork, wake: make(chan struct{}, n)}
	t.nap = time.NewTimer(time.Hour)
	t.nap.Stop()
	return t
}

// Workers returns n, the number of workers that must offer.
func (t *Terminator) Workers() int { return int(t.n) }

// Terminated reports whether the phase is over: all n workers offered, or
// Abort was called.
func (t *Terminator) Terminated() bool { return t.done() }

// Aborted reports whether Abort was called in this phase.
func (t *Terminator) Aborted() bool { return t.aborted.Load() }

// done reports whether waiters should return true.
func (t *Terminator) done() bool { return t.offered.Load() == t.n || t.aborted.Load() }

// Abort ends the phase for every worker: Offer returns true from now on, in
// waiting workers and in later calls, whether or not work is left. A worker
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
// any worker is inside Offer: call it between runs.
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

// Offer offers termination on behalf of a worker that holds no work. It
// returns true when all workers have offered (the phase is over: return from
// the phase) and false when some queue showed work (try to steal again). A
// worker that got false has withdrawn its offer and must offer again before
// the phase can end.
func (t *Terminator) Offer() bool {
	// The Add both counts the offer and, in the worker that completes the
	// count, observes every other offer (it reads the result of all the
	// earlier Adds in the counter's modification order).
	if t.offered.Add(1) == t.n {
		t.wakeAll()
		return true
	}
	if t.aborted.Load() {
		return true
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
		// Commit to sleep, then re-check what would wake us. A waker
		// publishes its condition (offered == n, master released, or work
		// in a queue) and then loads sleeping; we store sleeping and then
		// load the condition. With sequentially consistent atomics one of
		// us sees the other's write: the waker counts us and sends a token,
		// or we see the condition and do not block.
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

// spinMaster polls for termination or work: spin, yield, then nap.
func (t *Terminator) spinMaster() bool {
	// Spinning helps only when the worker that may publish work runs at
	// the same time on another P. With one P it only delays that worker;
	// with more workers than Ps, waiters take turns with the workers that
	// hold work, so spin not at all and yield for a tenth of the budget.
	procs := runtime.GOMAXPROCS(0)
	spin := procs > 1 && int(t.n) <= procs
	budget := SpinBudget
	if !spin {
		budget /= 10
	}
	start := time.Now()
	nap := 10 * time.Microsecond
	for round := 0; ; round++ {
		switch {
		case spin && round < spinRounds:
			// Pause with a poll of the counter, which also notices
			// termination as early as possible.
			for range 1 << round {
				if t.done() {
					break
				}
			}
		case time.Since(start) < budget:
			runtime.Gosched()
		default:
			t.napFor(nap)
			nap = min(2*nap, MaxNap)
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
	// Same commit-then-recheck as in wait.
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
