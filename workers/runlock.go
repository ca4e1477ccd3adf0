package workers

import (
	"sync"
	"sync/atomic"
)

// runLock serializes a set's runs. Its word holds the holder's token (read
// by the nested-run and cycle checks) for one CAS to lock and one to unlock.
// Waiters queue in FIFO order and unlock hands the lock to the first, so
// none starves; abandon and hand-off are both decided under queue.
//
// state is 0 when free, else token<<1 | queuedBit, the bit set iff the queue
// is non-empty (outside queue's critical sections). Its writers: tryLock,
// CAS 0 -> token<<1 (0: nobody waits, so it never overtakes); unlock, CAS
// token<<1 -> 0 (fails once queuedBit is set); enqueue, under queue, a CAS
// setting queuedBit before it appends; unlockSlow and abandon, under queue
// with the bit set, where no CAS outside queue can succeed: a plain Store.
//
// No hand-off is lost: the waiter's CAS setting queuedBit and the holder's
// freeing CAS are RMWs on one word. If the waiter's is first, the holder's
// fails and it unlocks under queue, after the append; else the waiter reads
// the word again and takes the lock (0) or queues behind a newcomer.
type runLock struct {
	state      atomic.Uint64
	queue      sync.Mutex
	head, tail *lockWaiter // the FIFO queue of waiters; guarded by queue
}

// lockWaiter is one goroutine waiting for the lock.
type lockWaiter struct {
	token   uint64
	next    *lockWaiter // guarded by the lock's queue mutex
	granted bool        // set with the hand-off's send on ready (capacity 1), under queue
	ready   chan struct{}
}

const (
	queuedBit uint64 = 1
	// anonToken is an unidentified holder's token (see token): no goroutine
	// has it, and shifted left by one it still fits the word.
	anonToken = ^uint64(0) >> 1
)

var waiterPool = sync.Pool{New: func() any { return &lockWaiter{ready: make(chan struct{}, 1)} }}

// tryLock takes the lock for token if it is free and nobody waits.
func (l *runLock) tryLock(token uint64) bool { return l.state.CompareAndSwap(0, token<<1) }

// enqueue takes the lock for token if it is free (and returns nil), or
// queues a waiter for token and returns it. The caller receives from its
// ready channel (then it holds the lock) or calls abandon, then done.
func (l *runLock) enqueue(token uint64) *lockWaiter {
	l.queue.Lock()
	for {
		s := l.state.Load()
		if s == 0 { // free, so nobody waits: take it, unless tryLock does
			if l.state.CompareAndSwap(0, token<<1) {
				l.queue.Unlock()
				return nil
			}
			continue
		}
		// Announce the queue before joining it: from this CAS on, the
		// holder's fast unlock fails. If the word changed, look again.
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

// abandon takes wt out of the queue and reports whether wt holds the lock
// after all (an unlock granted it first): the caller must use or unlock it.
func (l *runLock) abandon(wt *lockWaiter) (holds bool) {
	l.queue.Lock()
	defer l.queue.Unlock()
	if wt.granted {
		<-wt.ready // sent in the grant's critical section: no block
		return true
	}
	var prev *lockWaiter
	link := &l.head
	for *link != wt {
		prev, link = *link, &(*link).next
	}
	*link = wt.next
	if l.tail == wt {
		l.tail = prev
	}
	if l.head == nil { // the last waiter left: clear queuedBit (see runLock)
		l.state.Store(l.state.Load() &^ queuedBit)
	}
	return false
}

// done recycles wt, which is out of the queue and referred to by no one.
func (l *runLock) done(wt *lockWaiter) {
	wt.next = nil
	waiterPool.Put(wt)
}

// unlock releases the lock, to the first waiter if there is one.
func (l *runLock) unlock() {
	// Only a waiter setting queuedBit changes the holder's word.
	if s := l.state.Load(); s&queuedBit == 0 && l.state.CompareAndSwap(s, 0) {
		return
	}
	l.unlockSlow()
}

// unlockSlow hands the lock to the first waiter, or frees it if all left.
func (l *runLock) unlockSlow() {
	l.queue.Lock()
	defer l.queue.Unlock()
	wt := l.head
	if wt == nil { // abandon cleared queuedBit; tryLock needs 0
		l.state.Store(0)
		return
	}
	l.head = wt.next
	if l.head == nil {
		l.tail = nil
	}
	// Straight to the waiter's token, never through 0, so no newcomer
	// overtakes it; a plain Store, as queuedBit is set.
	next := wt.token << 1
	if l.head != nil {
		next |= queuedBit
	}
	l.state.Store(next)
	wt.granted = true
	wt.ready <- struct{}{} // capacity 1 and one send per grant: never blocks
}

// handOver makes tok the holder's token if old holds the lock, and reports
// whether it did: for a holder that waits while tok's goroutine acts for it.
// Under queue only the holder (old, waiting) could change a held word.
func (l *runLock) handOver(old, tok uint64) bool {
	l.queue.Lock()
	defer l.queue.Unlock()
	s := l.state.Load()
	if s>>1 != old {
		return false
	}
	l.state.Store(tok<<1 | s&queuedBit)
	return true
}

// owner returns the holder's token, 0 if the lock is free.
func (l *runLock) owner() uint64 { return l.state.Load() >> 1 }
