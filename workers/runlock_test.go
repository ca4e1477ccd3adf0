package workers

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/internal/testutil"
)

// TestRunLockMutualExclusion: many goroutines take the lock in turns; no two
// ever hold it at once and every acquisition is counted.
func TestRunLockMutualExclusion(t *testing.T) {
	l := runLock{}
	var in, total atomic.Int32
	const goroutines, each = 8, 2000
	testutil.RunCopies(goroutines, func(g int) {
		token := uint64(100 + g)
		for range each {
			l.lock(token)
			if in.Add(1) != 1 {
				t.Error("two holders at once")
			}
			assert.Equal(t, token, l.owner())
			in.Add(-1)
			total.Add(1)
			l.unlock()
		}
	})
	assert.Equal(t, int32(goroutines*each), total.Load())
	assert.Zero(t, l.owner())
	assert.True(t, l.tryLock(7))
	assert.False(t, l.tryLock(8))
	l.unlock()
}

// TestRunLockNoStarvation: a goroutine that re-takes the lock in a tight
// loop cannot keep a queued waiter out: unlock hands the lock to it.
func TestRunLockNoStarvation(t *testing.T) {
	l := runLock{}
	stop := make(chan struct{})
	var hog sync.WaitGroup
	hog.Add(1)
	go func() {
		defer hog.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			l.lock(3)
			l.unlock()
		}
	}()
	done := make(chan struct{})
	go func() {
		for range 100 {
			l.lock(4)
			l.unlock()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a waiter starved behind a goroutine re-taking the lock")
	}
	close(stop)
	hog.Wait()
}

// TestRunLockFIFOAndAbandon: waiters get the lock in the order they queued,
// straight from the holder (the owner is the next waiter before it even
// receives); a waiter that leaves is skipped; the last one to leave restores
// the fast unlock; a waiter that leaves after its grant holds the lock.
func TestRunLockFIFOAndAbandon(t *testing.T) {
	l := runLock{}
	require.True(t, l.tryLock(10))
	var ws []*lockWaiter
	for tok := uint64(11); tok <= 15; tok++ {
		wt := l.enqueue(tok)
		require.NotNil(t, wt, "the lock is held: enqueue must queue")
		ws = append(ws, wt)
	}
	assert.Equal(t, 5, l.queued())
	assert.False(t, l.tryLock(99), "a newcomer never overtakes the line")
	assert.False(t, l.abandon(ws[2]), "13 leaves before any grant")
	l.done(ws[2])
	for _, i := range []int{0, 1, 3} {
		l.unlock()
		assert.Equal(t, ws[i].token, l.owner(), "handed to the next in line")
		select {
		case <-ws[i].ready:
		default:
			t.Fatalf("waiter %d was not woken", ws[i].token)
		}
		l.done(ws[i])
	}
	// 15 is the last waiter; it is granted, then leaves: it holds the lock.
	l.unlock()
	assert.Equal(t, uint64(15), l.owner())
	assert.True(t, l.abandon(ws[4]), "granted before it left")
	l.done(ws[4])
	assert.Zero(t, l.queued())
	assert.Zero(t, l.state.Load()&queuedBit, "empty line: the bit is clear")
	l.unlock()
	assert.Zero(t, l.state.Load(), "free")

	// The last waiter leaving clears the bit, so the holder's fast unlock
	// frees the lock.
	require.True(t, l.tryLock(20))
	wt := l.enqueue(21)
	assert.NotZero(t, l.state.Load()&queuedBit)
	assert.False(t, l.abandon(wt))
	l.done(wt)
	assert.Equal(t, uint64(20)<<1, l.state.Load())
	l.unlock()
	assert.Zero(t, l.state.Load())
	// Enqueue on a free lock takes it.
	assert.Nil(t, l.enqueue(22))
	assert.Equal(t, uint64(22), l.owner())
	l.unlock()
}

// TestRunLockStressWithAbandons: goroutines take the lock by the fast path,
// by waiting in line, and by waiting with a random short bound after which
// they leave (holding the lock if it was handed to them meanwhile). No two
// ever hold it at once, no hand-off is lost (every waiter finishes), and the
// lock ends free with an empty line.
func TestRunLockStressWithAbandons(t *testing.T) {
	l := runLock{}
	var in, held, left atomic.Int64
	const goroutines, each = 8, 1500
	var wg sync.WaitGroup
	critical := func() {
		if in.Add(1) != 1 {
			t.Error("two holders at once")
		}
		held.Add(1)
		for range rand.IntN(50) {
			runtime.Gosched()
		}
		in.Add(-1)
		l.unlock()
	}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := uint64(100 + g)
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			for i := range each {
				switch (g + i) % 3 {
				case 0:
					l.lock(token)
					critical()
				case 1, 2:
					if l.tryLock(token) {
						critical()
						continue
					}
					wt := l.enqueue(token)
					if wt == nil {
						critical()
						continue
					}
					timer.Reset(time.Duration(rand.IntN(30)) * time.Microsecond)
					select {
					case <-wt.ready:
						l.done(wt)
						critical()
					case <-timer.C:
						holds := l.abandon(wt)
						l.done(wt)
						if holds {
							critical()
						} else {
							left.Add(1)
						}
					}
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("a waiter never got the lock: a hand-off was lost")
	}
	assert.Equal(t, int64(goroutines*each), held.Load()+left.Load())
	assert.Zero(t, l.state.Load(), "free at the end")
	assert.Zero(t, l.queued())
	t.Logf("held %d times, %d waits abandoned", held.Load(), left.Load())
}

// lock takes the lock for token, waiting in line if it is held.
func (l *runLock) lock(token uint64) {
	if l.tryLock(token) {
		return
	}
	if wt := l.enqueue(token); wt != nil {
		<-wt.ready
		l.done(wt)
	}
}

// queued returns the number of waiters in the queue (it takes the queue's
// mutex).
func (l *runLock) queued() (n int) {
	l.queue.Lock()
	defer l.queue.Unlock()
	for p := l.head; p != nil; p = p.next {
		n++
	}
	return n
}

// Tokens are goroutine numbers where goid is slow: past 2^31 and 2^32 they
// keep every bit, so a goroutine created late is never taken for the holder
// of a long-lived one's lock. With a 32-bit word, holder 2^31+5 read back as
// owner 5 (the shift dropped its top bit), and goroutine 5's next run of the
// set panicked as a nested run.
func TestRunLockTokensPast32Bits(t *testing.T) {
	var l runLock
	for _, holder := range []uint64{1<<31 + 5, 1<<32 + 5, 1<<62 + 5} {
		require.True(t, l.tryLock(holder))
		assert.Equal(t, holder, l.owner())
		assert.False(t, l.tryLock(5), "held by %d", holder)
		wt := l.enqueue(5)
		require.NotNil(t, wt, "held by %d: goroutine 5 waits", holder)
		l.unlock()
		<-wt.ready
		l.done(wt)
		assert.Equal(t, uint64(5), l.owner(), "handed to goroutine 5")
		l.unlock()
		assert.Zero(t, l.state.Load())
	}
}
