package workers

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// The cycle check. A run on set A whose copy starts a run on set B waits for
// B; if B's run, or one it waits for in turn, has a copy that starts a run on
// A, no run of the chain can finish: A -> B -> A. The same-set case is caught
// by lockSlow from A's own state; a cycle through other sets needs a view of
// all of them, kept here. It is consulted only when a run finds its set's
// lock taken, by a goroutine that is itself inside a run (only such a
// goroutine can close a cycle), so uncontended runs never pay for it.
//
// The wait-for graph is implicit:
//   - a set X waits for the goroutines that run its current run's copies: its
//     workers, and its owner (the goroutine holding its lock; it runs copies in
//     caller-runs and inline runs; listing it for plain runs too adds no path,
//     see below);
//   - a goroutine c waits for the set whose lock it is blocked on (recorded
//     in waiting), and for the set in whose end wait it sleeps (it holds that
//     set and its coordinator is parked: gang.Dispatcher.CoordinatorParked).
//     A goroutine is in at most one end wait, its innermost run, so a
//     coordinator still spinning in X's end wait has no out-edge and listing
//     it under X adds no path.
//
// A goroutine g about to block on set W closes a cycle iff W reaches g.
//
// Edges appear over time (a coordinator parks only after spinning), so a
// nested waiter polls the lock and re-checks instead of blocking; and since
// the graph is read while it changes, a cycle must be found by every check
// for at least a millisecond before it panics. A real cycle never changes:
// every goroutine in it waits for good.
var registry struct {
	mu      sync.Mutex
	sets    map[*Workers]struct{}
	waiting map[uintptr]*Workers // goroutine token -> the set whose lock it polls for
}

func register(w *Workers) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.sets == nil {
		registry.sets = make(map[*Workers]struct{})
		registry.waiting = make(map[uintptr]*Workers)
	}
	registry.sets[w] = struct{}{}
}

func unregister(w *Workers) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	delete(registry.sets, w)
}

// insideAnyRun reports whether goroutine g runs a copy of some set's run (as
// one of its workers) or holds some set's lock.
func insideAnyRun(g uintptr) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for x := range registry.sets {
		if x.mu.owner() == g || x.workerOf(g) >= 0 {
			return true
		}
	}
	return false
}

// waitNested takes w's lock for goroutine g, which is inside a run: it polls
// the lock with a backoff up to a millisecond, and panics if blocking would
// close a cycle of nested runs.
func waitNested(w *Workers, g, token uintptr, op string) {
	registry.mu.Lock()
	registry.waiting[g] = w
	registry.mu.Unlock()
	defer func() {
		registry.mu.Lock()
		delete(registry.waiting, g)
		registry.mu.Unlock()
	}()
	var since time.Time // when the check first found a cycle, zero if the last one did not
	backoff := 10 * time.Microsecond
	for !w.mu.tryLock(token) {
		registry.mu.Lock()
		path := cycleFrom(w, g)
		registry.mu.Unlock()
		// Confirm by existence, not by the path found: with several
		// routes the search may name a different one each time (it visits
		// the registry in map order).
		switch {
		case path == nil:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= time.Millisecond:
			panic(fmt.Sprintf("workers: %s on %q called from inside a copy of a run that waits for it through nested runs on other sets (%s); the runs would deadlock",
				op, w.name, strings.Join(path, " -> ")))
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Millisecond)
	}
}

// cycleFrom returns the names of the sets on a wait-for path from w to a set
// whose current run g is part of (w first, that set last, then w again), or
// nil. Called with registry.mu held.
func cycleFrom(w *Workers, g uintptr) []string {
	type step struct {
		set  *Workers
		prev int
	}
	steps := []step{{w, -1}}
	seen := map[*Workers]bool{w: true}
	for k := 0; k < len(steps); k++ {
		x := steps[k].set
		for _, c := range x.runGoroutines() {
			if c == g {
				var names []string
				for j := k; j >= 0; j = steps[j].prev {
					names = append([]string{fmt.Sprintf("%q", steps[j].set.name)}, names...)
				}
				return append(names, fmt.Sprintf("%q", w.name))
			}
			// c waits for the set it polls for, and for the set whose end
			// wait it sleeps in.
			var next []*Workers
			if y := registry.waiting[c]; y != nil {
				next = append(next, y)
			}
			for y := range registry.sets {
				if y.mu.owner() == c && y.d.CoordinatorParked() {
					next = append(next, y)
				}
			}
			for _, y := range next {
				if !seen[y] {
					seen[y] = true
					steps = append(steps, step{y, k})
				}
			}
		}
	}
	return nil
}

// runGoroutines returns the goroutines that x's current run waits for: its
// lock's holder (the coordinator, or the caller running copies) and its
// workers. An idle worker holds and waits for nothing, so listing every
// worker adds no false edge.
func (x *Workers) runGoroutines() []uintptr {
	var gs []uintptr
	if o := x.mu.owner(); o != 0 {
		gs = append(gs, o)
	}
	for i := range int(x.created.Load()) {
		if wk := x.workers[i].Load(); wk != nil {
			if t := wk.g.Load(); t != 0 {
				gs = append(gs, t)
			}
		}
	}
	return gs
}
