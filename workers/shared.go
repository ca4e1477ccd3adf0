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
var shared struct {
	mu   sync.Mutex
	sets map[string]*sharedEntry
}

type sharedEntry struct {
	s    *Shared
	refs int
}

// Shared is a process-wide set obtained from Acquire. It has every method of
// Workers except Close (the two embed one method set): only the release
// functions Acquire returns close it, so a holder cannot close the set under
// the other holders, by construction.
//
// The zero value is not usable; a Shared must not be copied. All methods are
// safe for concurrent use. After the last release the set is closed, and the
// methods that run tasks panic as they do on a closed Workers.
type Shared struct {
	set
}

// Acquire returns the process-wide set named name, creating it with New(name,
// maxWorkers, opts...) if no holder has it, and a release function the
// holder calls once when done with it (later calls do nothing). The last
// release closes the set; it panics, consuming nothing, if called from inside
// a copy of a run that holds the set, directly or through runs nested in it
// on other sets (a goroutine that holds this set and another one counts as
// inside both). Runs that never hold it (a run of one caller-runs copy, a
// caller-runs run that found the set busy: see WithConcurrentRuns) run every
// copy on their caller and use no worker, so a last release from any of
// their copies closes the set as Close would.
// Every Acquire of a name returns the same *Shared until that name's last
// release.
//
// Many runtimes in one process can so share one set of workers instead of
// each starting GOMAXPROCS goroutines. maxWorkers and opts take effect only
// when the set is created; later holders get the existing set and should size
// their runs with its MaxWorkers. The set always has WithConcurrentRuns: a
// holder's caller-runs run (ForRange, RunContext, ...) that finds the set busy
// runs on the holder's own goroutine instead of waiting, and plain runs wait
// their turn on the set's run lock, which serves waiters in FIFO order and
// hands itself over to the first of them, so no holder is starved.
//
// Acquire panics for the same arguments New does, whether or not the name is
// held (its messages name Acquire); a panicking Acquire registers nothing,
// takes no reference and leaves an existing set unchanged.
func Acquire(name string, maxWorkers int, opts ...Option) (s *Shared, release func()) {
	c := newConfig("Acquire", name, maxWorkers, opts) // panics on bad arguments, before any change
	c.concurrent = true                               // independent holders cannot coordinate copy ids
	shared.mu.Lock()
	defer shared.mu.Unlock()
	e := shared.sets[name]
	if e == nil {
		sh := &Shared{}
		sh.init(name, maxWorkers, c)
		e = &sharedEntry{s: sh}
		if shared.sets == nil {
			shared.sets = make(map[string]*sharedEntry)
		}
		shared.sets[name] = e
	}
	e.refs++
	released := new(bool) // guarded by shared.mu
	return e.s, func() { releaseShared(name, e, released) }
}

// releaseShared drops the reference of the release function whose flag is
// released, once. The last release closes the set, so it must not run inside
// one of the set's own copies or a run nested in one (Close there would wait
// for the run it is part of): it then panics before changing anything, the
// reference is kept and the release function still works once the run is
// over.
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
