package workers

import (
	"fmt"
	"sync"

	"github.com/workgang/workgang/internal/goid"
)

// shared is the registry of Acquire's sets, by name. The release that drops
// a name's last reference removes its entry, under mu, and closes the set.
var shared = struct {
	mu   sync.Mutex
	sets map[string]*sharedEntry
}{sets: map[string]*sharedEntry{}}

type sharedEntry struct {
	s    *Workers
	refs int
}

// Acquire returns the process-wide set named name and this holder's release
// function (later calls of it do nothing). The first Acquire of a name makes
// the set as New does, with WithConcurrentRuns; a later one with a larger
// maxWorkers raises MaxWorkers (and ActiveWorkers, if equal) after the run
// in progress. The last release closes the set; it panics from inside the
// set's run. Close on the set panics. Acquire panics where New does.
//
// A library keeps its set in a package variable and never releases it:
//
//	var set, _ = workers.Acquire("mylib", runtime.NumCPU())
func Acquire(name string, maxWorkers int, opts ...Option) (s *Workers, release func()) {
	c := newConfig("Acquire", name, maxWorkers, opts) // panics before any change
	c.concurrent, c.acquired = true, true             // independent holders cannot coordinate copy ids
	shared.mu.Lock()
	e := shared.sets[name]
	if e == nil {
		e = &sharedEntry{s: newSet(name, maxWorkers, c)}
		shared.sets[name] = e
	}
	e.refs++
	released := new(bool) // guarded by shared.mu
	shared.mu.Unlock()
	// Outside shared.mu: growing waits for a run in progress. This holder's
	// reference keeps the set open meanwhile.
	if maxWorkers > e.s.MaxWorkers() {
		e.s.grow("Acquire", maxWorkers)
	}
	return e.s, func() { releaseShared(name, e, released) }
}

// releaseShared drops a holder's reference, once. The last release closes
// the set; from inside the set's own run that would wait for itself, so it
// panics before changing anything.
func releaseShared(name string, e *sharedEntry, released *bool) {
	shared.mu.Lock()
	if *released {
		shared.mu.Unlock()
		return
	}
	if e.refs == 1 && insideRunOf(e.s, goid.Get()) {
		shared.mu.Unlock()
		panic(fmt.Sprintf("workers: last release of shared set %q called from inside one of its own copies (directly or through nested runs on other sets): it would close the set during its own run; release it after the run", name))
	}
	*released = true
	e.refs--
	last := e.refs == 0
	if last {
		delete(shared.sets, name)
	}
	shared.mu.Unlock()
	if last {
		e.s.close() // outside shared.mu: other names' Acquire must not wait for this run
	}
}
