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
// all of them, kept here. It is consulted only when a run finds its set's lock
// taken (the chain's last run always does: A is held by the run at the
// chain's start), so uncontended runs never pay for it.
//
// The wait-for graph is implicit: a set X waits for the goroutines running
// its current run (its owner, the coordinator, and its workers while they run
// copies); a goroutine waits for the set whose lock it holds (it is that
// set's owner) or is blocked on (recorded in waiting by lockSlow before it
// blocks). A goroutine g about to block on set W closes a cycle iff W reaches
// g through these edges.
var registry struct {
	mu      sync.Mutex
	sets    map[*Workers]struct{}
	waiting map[uintptr]*Workers // goroutine token -> the set whose lock it is blocked on
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

// waitFor is called by goroutine g before it blocks on w's lock. It panics if
// blocking would close a cycle of nested runs; otherwise it records the wait
// (cleared by doneWaiting once g holds the lock).
//
// The graph is read from atomics that change while it is read (owners and
// workers' tokens), so a cycle seen once might be an artefact of reading
// different moments. A real cycle never changes: every goroutine in it is
// blocked for good. So a cycle must be seen twice, a millisecond apart, the
// same, before waitFor panics; a transient one makes it wait normally.
func waitFor(w *Workers, g uintptr, op string) {
	registry.mu.Lock()
	path := cycleFrom(w, g)
	registry.mu.Unlock()
	if path != nil {
		time.Sleep(time.Millisecond)
		registry.mu.Lock()
		again := cycleFrom(w, g)
		registry.mu.Unlock()
		if strings.Join(again, "\x00") == strings.Join(path, "\x00") {
			panic(fmt.Sprintf("workers: %s on %q called from inside a copy of a run that waits for it through nested runs on other sets (%s); the runs would deadlock",
				op, w.name, strings.Join(path, " -> ")))
		}
	}
	registry.mu.Lock()
	registry.waiting[g] = w
	registry.mu.Unlock()
}

func doneWaiting(g uintptr) {
	registry.mu.Lock()
	delete(registry.waiting, g)
	registry.mu.Unlock()
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
			// c waits for the sets it holds and the one it is blocked on.
			var next []*Workers
			if y := registry.waiting[c]; y != nil {
				next = append(next, y)
			}
			for y := range registry.sets {
				if y != x && y.owner.Load() == c {
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
	if o := x.owner.Load(); o != 0 {
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
