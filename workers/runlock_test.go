package workers

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRunLockMutualExclusion: many goroutines take the lock in turns; no two
// ever hold it at once and every acquisition is counted.
func TestRunLockMutualExclusion(t *testing.T) {
	l := newRunLock()
	var in, total atomic.Int32
	var wg sync.WaitGroup
	const goroutines, each = 8, 2000
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := uintptr(100 + g)
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
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(goroutines*each), total.Load())
	assert.Zero(t, l.owner())
	assert.True(t, l.tryLock(7))
	assert.False(t, l.tryLock(8))
	l.unlock()
}

// TestRunLockNoStarvation: a goroutine that re-takes the lock in a tight
// loop cannot keep a queued waiter out: unlock hands the lock to it.
func TestRunLockNoStarvation(t *testing.T) {
	l := newRunLock()
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
