package workers

import (
	"fmt"
	"sync"

	"github.com/workgang/workgang/internal/goid"
)

// The process-wide registry of shared sets, by name. A set is created by the
// first Acquire of its name and closed by the release that drops its last
// reference; the entry is removed under the same lock, so a later Acquire
// creates a fresh set.
var shared = struct {
	mu   sync.Mutex
	sets map[string]*sharedEntry
}{sets: map[string]*sharedEntry{}}

type sharedEntry struct {
	s    *Workers
	refs int
}

// Acquire returns the process-wide set named name and this holder's release
// function (calls after the first do nothing). The first Acquire of a name
// makes the set, as New(name, maxWorkers, opts...) with WithConcurrentRuns;
// later holders get that set, its options unchanged, except that a larger
// maxWorkers raises its MaxWorkers (and ActiveWorkers, unless a holder set
// it lower): libraries that share a name cannot know who came first, and
// workers start only when runs need them, so the largest request costs
// nothing until it is used. Raising waits for the set's run in progress.
// The last release closes the set; Close on it panics, and so does a last
// release from inside a run that holds the set. Acquire panics for the
// arguments New rejects.
//
// A library takes its set once, in a package variable:
//
//	var set, _ = workers.Acquire("mylib", runtime.NumCPU())
//
// and never releases it (it costs no goroutine until a run needs one), or
// keeps the release function for a Close of its own.
func Acquire(name string, maxWorkers int, opts ...Option) (s *Workers, release func()) {
	c := newConfig("Acquire", name, maxWorkers, opts) // panics on bad arguments, before any change
	c.concurrent = true                               // independent holders cannot coordinate copy ids
	shared.mu.Lock()
	e := shared.sets[name]
	if e == nil {
		sh := &Workers{acquired: true}
		sh.init(name, maxWorkers, c)
		e = &sharedEntry{s: sh}
		shared.sets[name] = e
	}
	e.refs++
	released := new(bool) // guarded by shared.mu
	shared.mu.Unlock()
	// Outside the registry lock (growing waits for a run in progress); this
	// holder's reference keeps the set open meanwhile.
	if maxWorkers > e.s.MaxWorkers() {
		e.s.grow("Acquire", maxWorkers)
	}
	return e.s, func() { releaseShared(name, e, released) }
}

// releaseShared drops the reference of the release function whose flag is
// released, once. The last release closes the set, which inside one of its
// own copies or a run nested in one would wait for the run it is part of:
// there it panics before changing anything, and works once the run is over.
func releaseShared(name string, e *sharedEntry, released *bool) {
	shared.mu.Lock()
	if *released {
		shared.mu.Unlock()
		return
	}
	if e.refs == 1 && insideRunOf(&e.s.set, goid.Get()) {
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
		// Outside the registry lock: Close waits for a run in progress,
		// which must not block other names' Acquire calls.
		e.s.close()
	}
}
