package workers

import (
	"sync"
	"sync/atomic"
)

// runLock serializes a set's runs. Its word is the holder's token (the
// goroutine's identity where that is cheap to get), so taking the lock also
// records who holds it, which the nested-run and cycle checks need: an
// uncontended lock and unlock cost two atomic read-modify-writes instead of
// the four of a sync.Mutex plus an owner word set and cleared.
//
// Waiters queue on a sync.Mutex (FIFO once one has waited a millisecond:
// its starvation mode), so only the first waiter contends with the holder,
// and an unlock that sees it hands the lock over directly (the word goes to
// handoff, which newcomers' fast path cannot take), so no waiter starves
// behind goroutines that keep re-taking the lock.
type runLock struct {
	// holder is 0 (free), handoff (released to the queued waiter) or the
	// holder's token. Tokens are goroutine identities or anonToken, never
	// 0 or handoff.
	holder atomic.Uintptr
	// waiting is 1 while the first queued waiter waits for the holder.
	waiting atomic.Uint32
	queue   sync.Mutex
	// wake carries the unlocker's token to the first waiter; capacity 1,
	// sends never block (a token may be left over: the waiter then re-checks
	// and waits again).
	wake chan struct{}
}

const (
	handoff   uintptr = 1
	anonToken uintptr = 2 // a holder that runs no user code, where identity is costly
)

func newRunLock() runLock { return runLock{wake: make(chan struct{}, 1)} }

// tryLock takes the lock for token if it is free.
func (l *runLock) tryLock(token uintptr) bool { return l.holder.CompareAndSwap(0, token) }

// lock takes the lock for token, waiting in line if it is held.
func (l *runLock) lock(token uintptr) {
	if l.tryLock(token) {
		return
	}
	l.queue.Lock()
	defer l.queue.Unlock()
	// Announce, then try: the Dekker pair of unlock (store holder, then
	// load waiting). Either this CAS sees the lock free, or the unlocker
	// sees waiting and sends a token (and, if it saw it first, hands over).
	l.waiting.Store(1)
	for !l.holder.CompareAndSwap(0, token) && !l.holder.CompareAndSwap(handoff, token) {
		<-l.wake
	}
	l.waiting.Store(0)
}

// unlock releases the lock, to the first waiter if there is one.
func (l *runLock) unlock() {
	if l.waiting.Load() != 0 {
		l.holder.Store(handoff)
	} else {
		l.holder.Store(0)
		if l.waiting.Load() == 0 {
			return
		}
		// A waiter announced itself after the first look: it may have
		// failed its CAS before the Store above, so wake it to try again.
	}
	select {
	case l.wake <- struct{}{}:
	default: // a token is already there for it
	}
}

// owner returns the holder's token, 0 if the lock is free or being handed
// over.
func (l *runLock) owner() uintptr {
	if h := l.holder.Load(); h != handoff {
		return h
	}
	return 0
}
