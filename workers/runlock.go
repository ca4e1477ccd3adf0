package workers

import (
	"sync"
	"sync/atomic"
)

// runLock serializes a set's runs. Its word records the holder's token (the
// goroutine's identity where that is cheap to get), so taking the lock also
// records who holds it, which the nested-run and cycle checks need: an
// uncontended lock and unlock cost two atomic read-modify-writes (a CAS each)
// instead of the four of a sync.Mutex plus an owner word set and cleared.
//
// Waiters queue in strict FIFO order, and unlock hands the lock to the first
// of them directly (the word goes from the old holder's token to the new
// one's, never through free), so a goroutine that keeps re-taking the lock
// cannot overtake a waiter, and none starves. A waiter may leave the queue
// (abandon) at any time, for a cancelled context or to re-check for a cycle
// of nested runs, without losing a hand-off: the hand-off and the leaving
// are decided under the queue's mutex, and a waiter that finds the lock was
// already handed to it holds it.
//
// The word. state is 0 when the lock is free; otherwise it is the holder's
// token shifted left by one, with queuedBit set while the queue is not empty.
// Invariant, at every moment outside queue.mu's critical sections:
// queuedBit is set iff the queue is non-empty. Only these steps write state:
//
//   - lock's fast path: CAS 0 -> token<<1. From 0 only, and 0 means the queue
//     is empty (the invariant), so a newcomer never overtakes a waiter.
//   - unlock's fast path: CAS token<<1 -> 0, which fails while queuedBit is
//     set; unlock then takes the slow path.
//   - enqueue (under queue.mu): sets queuedBit with a CAS from the value it
//     read, then appends itself; if the word was 0 it takes the lock instead,
//     with the fast path's CAS 0 -> token<<1.
//   - the slow unlock and abandon (under queue.mu, with queuedBit set): while
//     the bit is set no step outside queue.mu can write the word (both fast
//     paths' CASes fail on it), so a plain Store is enough there.
//
// No hand-off is lost: a waiter's CAS that sets queuedBit and the holder's
// fast-path CAS that frees the lock are RMWs on the same word, so one comes
// first in its modification order. If the waiter's does, the holder's CAS
// fails and it unlocks through queue.mu, after the waiter has appended
// itself (enqueue holds queue.mu across both); if the holder's does, the
// waiter's CAS fails and it reads the word again: 0, and it takes the lock
// itself, or a newcomer's token (the newcomer's fast path got there first),
// and it queues behind that holder.
type runLock struct {
	state atomic.Uintptr
	queue sync.Mutex
	// head and tail are the FIFO queue of waiters; guarded by queue.
	head, tail *lockWaiter
}

// lockWaiter is one goroutine waiting for the lock.
type lockWaiter struct {
	token uintptr
	next  *lockWaiter // guarded by the lock's queue mutex
	// granted is set, under the queue mutex, by the unlock that hands the
	// lock to this waiter, in the same critical section as the send on
	// ready.
	granted bool
	// ready receives exactly one token per grant; capacity 1, so the
	// granting unlock never blocks.
	ready chan struct{}
}

const (
	queuedBit uintptr = 1
	// anonToken is the token of a holder that runs no user code, where
	// identity is costly: no goroutine has it (goroutine ids are far
	// smaller), and shifted left by one it still fits the word.
	anonToken = ^uintptr(0) >> 1
)

var waiterPool = sync.Pool{New: func() any { return &lockWaiter{ready: make(chan struct{}, 1)} }}

// tryLock takes the lock for token if it is free and nobody waits.
func (l *runLock) tryLock(token uintptr) bool { return l.state.CompareAndSwap(0, token<<1) }

// enqueue takes the lock for token if it is free (and returns nil), or puts a
// waiter for token at the tail of the queue and returns it. The caller then
// receives from the waiter's ready channel (it holds the lock after that), or
// calls abandon; either way it finally calls done.
func (l *runLock) enqueue(token uintptr) *lockWaiter {
	l.queue.Lock()
	for {
		s := l.state.Load()
		if s == 0 {
			// Free, so (invariant) nobody waits: take it. The CAS
			// fails only if a fast-path lock got there first.
			if l.state.CompareAndSwap(0, token<<1) {
				l.queue.Unlock()
				return nil
			}
			continue
		}
		// Announce the queue before joining it: from this CAS on, the
		// holder's fast unlock fails and it unlocks through queue.mu,
		// which it can take only after the append below. The CAS fails
		// if the holder freed (or, the bit being clear, fast-locked and
		// freed) the word meanwhile: look again.
		if s&queuedBit != 0 || l.state.CompareAndSwap(s, s|queuedBit) {
			break
		}
	}
	wt := waiterPool.Get().(*lockWaiter)
	wt.token, wt.granted, wt.next = token, false, nil
	if l.tail == nil {
		l.head = wt
	} else {
		l.tail.next = wt
	}
	l.tail = wt
	l.queue.Unlock()
	return wt
}

// abandon takes wt out of the queue, for a waiter that stops waiting. It
// reports whether wt holds the lock after all: an unlock granted it the
// lock before wt could leave (its token is then taken from ready here), and
// the caller must use or unlock it. Either way the caller then calls done.
func (l *runLock) abandon(wt *lockWaiter) (holds bool) {
	l.queue.Lock()
	defer l.queue.Unlock()
	if wt.granted {
		// The grant's send happened in the unlocker's critical section,
		// before ours: the receive cannot block.
		<-wt.ready
		return true
	}
	var prev *lockWaiter
	for p := l.head; p != wt; p = p.next {
		prev = p
	}
	if prev == nil {
		l.head = wt.next
	} else {
		prev.next = wt.next
	}
	if l.tail == wt {
		l.tail = prev
	}
	if l.head == nil {
		// The last waiter left: clear queuedBit so that the holder's fast
		// unlock works again. The bit is set, so no step outside
		// queue.mu writes the word meanwhile: a plain Store keeps the
		// holder's token.
		l.state.Store(l.state.Load() &^ queuedBit)
	}
	return false
}

// done recycles wt; it is out of the queue (granted or abandoned), and no
// other goroutine refers to it any more.
func (l *runLock) done(wt *lockWaiter) {
	wt.next = nil
	waiterPool.Put(wt)
}

// unlock releases the lock, to the first waiter if there is one.
func (l *runLock) unlock() {
	// The holder's word changes only by the holder, or by a waiter setting
	// queuedBit; if the CAS fails, the bit is set.
	if s := l.state.Load(); s&queuedBit == 0 && l.state.CompareAndSwap(s, 0) {
		return
	}
	l.unlockSlow()
}

// unlockSlow hands the lock to the first waiter, or frees it if every waiter
// abandoned meanwhile.
func (l *runLock) unlockSlow() {
	l.queue.Lock()
	defer l.queue.Unlock()
	wt := l.head
	if wt == nil {
		// The waiters left (abandon cleared queuedBit): free the word. No
		// fast-path lock can have written it (it was not 0).
		l.state.Store(0)
		return
	}
	l.head = wt.next
	if l.head == nil {
		l.tail = nil
	}
	// Straight from this holder to the waiter, never through 0: no
	// newcomer's fast path can take the lock in between. The bit stays set
	// while others wait. queuedBit is set here, so nothing outside
	// queue.mu writes the word: a plain Store suffices. The new holder's
	// token is visible to the nested-run and cycle checks at once, before
	// the waiter even wakes.
	next := wt.token << 1
	if l.head != nil {
		next |= queuedBit
	}
	l.state.Store(next)
	wt.granted = true
	wt.ready <- struct{}{} // capacity 1 and one send per grant: never blocks
}

// owner returns the holder's token, 0 if the lock is free.
func (l *runLock) owner() uintptr { return l.state.Load() >> 1 }
