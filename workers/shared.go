package workers

import "sync"

// The process-wide registry of shared sets, by name. A set is created by the
// first Acquire of its name and closed by the release that drops its last
// reference; the entry is removed under the same lock, so a later Acquire
// creates a fresh set.
var shared struct {
	mu   sync.Mutex
	sets map[string]*sharedEntry
}

type sharedEntry struct {
	w    *Workers
	refs int
}

// Acquire returns the process-wide set named name, creating it with New(name,
// maxWorkers, opts...) if no holder has it, and a release function the
// holder calls once when done with it (later calls do nothing). The last
// release closes the set.
//
// Many runtimes in one process can so share one set of workers instead of
// each starting GOMAXPROCS goroutines. maxWorkers and opts take effect only
// when the set is created; later holders get the existing set and should size
// their runs with its MaxWorkers. Runs from all holders are serialized by the
// set's mutex, which hands itself over in FIFO order to waiters that have
// waited longer than a millisecond (sync.Mutex's starvation mode), so no
// holder is starved.
//
// A shared set must not be closed with Close (it panics); only the release
// functions close it. Acquire panics for the same arguments New does.
func Acquire(name string, maxWorkers int, opts ...Option) (w *Workers, release func()) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	e := shared.sets[name]
	if e == nil {
		w := New(name, maxWorkers, opts...) // panics on bad arguments, before registering
		w.shared = true
		e = &sharedEntry{w: w}
		if shared.sets == nil {
			shared.sets = make(map[string]*sharedEntry)
		}
		shared.sets[name] = e
	}
	e.refs++
	var once sync.Once
	return e.w, func() { once.Do(func() { releaseShared(name, e) }) }
}

func releaseShared(name string, e *sharedEntry) {
	shared.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		delete(shared.sets, name)
	}
	shared.mu.Unlock()
	if last {
		// Outside the registry lock: Close waits for a run in progress,
		// which must not block other names' Acquire calls.
		e.w.close()
	}
}
