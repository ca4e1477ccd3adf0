package workers

import (
	"fmt"
	"runtime"
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
// in progress; from inside a copy of that run, where raising it would wait
// for itself, Acquire panics and takes no reference. The last release closes
// the set; it panics from inside the set's run. Close on the set panics.
// Acquire panics where New does.
//
// A library that needs no set of its own name runs on Default instead.
func Acquire(name string, maxWorkers int, opts ...Option) (s *Workers, release func()) {
	c := newConfig("Acquire", name, maxWorkers, opts) // panics before any change
	c.concurrent, c.acquired = true, true             // independent holders cannot coordinate copy ids
	// grow waits for the run in progress (and panics inside it), so it runs
	// before the reference is taken, outside shared.mu: a panic leaves nothing
	// behind. The set may be closed meanwhile (grow does nothing): look again.
	// A registered entry is open (its last release removes it, under
	// shared.mu, before closing), so a lookup holds until the reference.
	for {
		shared.mu.Lock()
		e := shared.sets[name]
		if e == nil {
			e = &sharedEntry{s: newSet(name, maxWorkers, c)}
			shared.sets[name] = e
		}
		if maxWorkers <= e.s.MaxWorkers() {
			e.refs++
			shared.mu.Unlock()
			released := new(bool) // guarded by shared.mu
			return e.s, func() { releaseShared(name, e, released) }
		}
		shared.mu.Unlock()
		e.s.grow("Acquire", maxWorkers)
	}
}

// releaseShared drops a holder's reference, once. The last release closes
// the set, and panics, changing nothing, inside the set's own run.
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

// DefaultName is the name of the set Default returns.
const DefaultName = "default"

// defaultSet is Default's set. Once orders the write of s in Do before every
// read after a Do returns; its fast path is one atomic load.
var defaultSet struct {
	once sync.Once
	s    *Workers
}

// Default returns the process-wide set for libraries and programs that do
// not size their own, made on first use as Acquire makes a set, with
// runtime.NumCPU() MaxWorkers (SetDefault sizes it otherwise); later calls
// neither lock nor allocate. Its workers start as runs need them. It is
// never closed: Close on it panics. Its size does not follow GOMAXPROCS:
// loops (ForRange, ForChunks, ForRangeContext, Do) cut their copies to
// GOMAXPROCS at each call; RunN, RunContext and RunTeam run up to MaxWorkers.
//
// A library calls it where it runs, never at init, so that importing the
// library does no work:
//
//	workers.Default().ForRange(len(xs), func(_, lo, hi int) { ... })
func Default() *Workers {
	defaultSet.once.Do(func() {
		n := runtime.NumCPU()
		defaultSet.s = newDefault(n, newConfig("Default", DefaultName, n, nil))
	})
	return defaultSet.s
}

func newDefault(maxWorkers int, c config) *Workers {
	c.concurrent, c.acquired = true, true // shared, never closed
	return newSet(DefaultName, maxWorkers, c)
}

// SetDefault makes the set Default returns with maxWorkers and opts, checked
// as New does. An application calls it at most once, at the start of main,
// before anything uses Default; once the set exists (a library's init called
// Default, a second SetDefault) it panics, changing nothing.
func SetDefault(maxWorkers int, opts ...Option) {
	c := newConfig("SetDefault", DefaultName, maxWorkers, opts) // panics before Do: Default stays unmade
	made := false
	defaultSet.once.Do(func() {
		defaultSet.s = newDefault(maxWorkers, c)
		made = true
	})
	if !made {
		panic(fmt.Sprintf("workers: SetDefault(%d): the default set already exists (made by Default or SetDefault with MaxWorkers %d); call SetDefault once, at the start of main, before anything uses Default", maxWorkers, defaultSet.s.MaxWorkers()))
	}
}
