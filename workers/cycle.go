package workers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/workgang/workgang/internal/peek"
)

// The cycle check. A run on set A whose copy starts a run on set B waits for
// B; if B's run, or one it waits for in turn, has a copy that starts a run on
// A, no run of the chain can finish: A -> B -> A. lockSlow catches the
// same-set case from A's own state; a cycle through other sets needs a view
// of all of them, kept here. Only a goroutine inside a run can close a cycle,
// so only such a goroutine that finds a set's lock taken consults it:
// uncontended runs never pay for it.
//
// The wait-for graph is implicit:
//   - a set X waits for the goroutines that run its current run's copies: its
//     workers, and its owner (the holder of its lock, which runs copies in
//     caller-runs and inline runs; listing it for plain runs adds no path);
//   - a goroutine c waits for the set whose lock it is blocked on (waiting),
//     and for the set in whose end wait it sleeps (it holds that set and its
//     coordinator is parked: internal/peek). Holding a set is not enough: a
//     holder running a copy of its own may be inside a run on another set,
//     which it waits for instead. A goroutine is in at most one end wait, its
//     innermost run's, so one still spinning in X's end wait has no out-edge.
//
// A goroutine g about to block on set W closes a cycle iff W reaches g. Edges
// appear over time (a coordinator parks only after spinning) and the graph
// is read while it changes, so a nested waiter re-checks on a timer and
// panics only on a cycle that every check found for a millisecond: a real
// cycle never changes, as every goroutine in it waits for good.
//
// Every set takes part from New to Close, with or without workers (the
// holder of an inline run is inside a run too), held weakly: a set dropped
// without Close (it has no worker goroutines, or they would keep it alive)
// is still collected. register prunes collected entries whenever the map
// doubled: amortized O(1), cheaper than a cleanup per set (BenchmarkNewClose).
var registry = struct {
	mu      sync.Mutex
	sets    map[weak.Pointer[set]]struct{}
	pruneAt int              // prune when len(sets) reaches this
	waiting map[uintptr]*set // goroutine token -> the set whose lock it waits for, nested waiters only
}{sets: map[weak.Pointer[set]]struct{}{}, waiting: map[uintptr]*set{}}

func register(w *set) {
	wp := weak.Make(w)
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if len(registry.sets) >= registry.pruneAt {
		for p := range registry.sets {
			if p.Value() == nil {
				delete(registry.sets, p)
			}
		}
		registry.pruneAt = max(2*len(registry.sets), 64)
	}
	registry.sets[wp] = struct{}{}
}

func unregister(w *set) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	delete(registry.sets, weak.Make(w))
}

// liveSets returns the registered sets. Called with registry.mu held.
func liveSets() []*set {
	sets := make([]*set, 0, len(registry.sets))
	for wp := range registry.sets {
		if x := wp.Value(); x != nil {
			sets = append(sets, x)
		}
	}
	return sets
}

// insideAnyRun reports whether goroutine g runs a copy of some set's run (as
// one of its workers) or holds some set's lock.
func insideAnyRun(g uintptr) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, x := range liveSets() {
		if x.mu.owner() == g || x.workerOf(g) >= 0 {
			return true
		}
	}
	return false
}

// insideRunOf reports whether goroutine g is part of w's current run: one of
// its goroutines (its lock's holder, its workers), or, through nested runs,
// one running a set whose lock such a goroutine holds, and so on. A holder
// of w and another set counts that set as nested even if it is the outer one
// (which it took first is recorded nowhere): erring towards "inside" makes a
// last release panic rather than close a set under a run that waits for it.
func insideRunOf(w *set, g uintptr) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return pathTo(w, g, false) != nil
}

// waitLock takes w's lock for goroutine g (with token tok), which found it
// held: it waits its turn in the lock's FIFO queue. A nested waiter (g is
// inside some run) also re-checks for a cycle on a timer, backing off up to
// a millisecond, and panics once one is confirmed (leaving the queue first,
// unless the lock was handed to it meanwhile: then it was in no cycle). With
// ctx done, before it queues or while it waits, it returns ctx's cause
// holding nothing (see gotLock). Every wait of a run (not of Close) is
// counted in the set's Stats.
func (w *set) waitLock(op string, g, tok uintptr, nested bool, ctx context.Context) error {
	done := ctx.Done() // nil for a ctx that is never done
	if done != nil && ctx.Err() != nil {
		return context.Cause(ctx) // done before it queued
	}
	start := time.Now()
	wt := w.mu.enqueue(tok)
	if wt == nil {
		return nil // freed meanwhile: taken without waiting
	}
	defer w.mu.done(wt)
	if op != "Close" {
		defer func() {
			w.waits.Add(1)
			w.waitNanos.Add(uint64(time.Since(start)))
		}()
	}
	var timer *time.Timer
	var check <-chan time.Time // the cycle check's timer; nil (never ready) unless nested
	if nested {
		registry.mu.Lock()
		registry.waiting[g] = w
		registry.mu.Unlock()
		defer func() {
			registry.mu.Lock()
			delete(registry.waiting, g)
			registry.mu.Unlock()
		}()
		timer = time.NewTimer(firstCheck)
		defer timer.Stop()
		check = timer.C
	}
	var since time.Time // when the check first found a cycle, zero if the last one did not
	backoff := firstCheck
	for {
		select {
		case <-wt.ready:
			return w.gotLock(ctx)
		case <-done: // never ready if nil
			if w.mu.abandon(wt) {
				w.mu.unlock() // handed to it meanwhile: pass it on
			}
			return context.Cause(ctx)
		case <-check:
		}
		registry.mu.Lock()
		path := pathTo(w, g, true)
		registry.mu.Unlock()
		// Confirm by existence, not by the path: with several routes the
		// search (in map order) may name a different one each time.
		switch {
		case path == nil:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= time.Millisecond:
			if w.mu.abandon(wt) {
				return w.gotLock(ctx)
			}
			var names []string
			for _, x := range append(path, w) {
				names = append(names, fmt.Sprintf("%q", x.name))
			}
			panic(fmt.Sprintf("workers: %s on %q called from inside a copy of a run that waits for it through nested runs on other sets (%s); the runs would deadlock",
				op, w.name, strings.Join(names, " -> ")))
		}
		backoff = min(2*backoff, time.Millisecond)
		timer.Reset(backoff)
	}
}

// firstCheck is how long a nested waiter waits before its first cycle check;
// the interval then doubles up to a millisecond.
const firstCheck = 10 * time.Microsecond

// gotLock ends a wait that got the lock: with ctx done by then, the run runs
// nothing, so the lock goes to the next waiter at once.
func (w *set) gotLock(ctx context.Context) error {
	if ctx.Err() != nil {
		w.mu.unlock()
		return context.Cause(ctx)
	}
	return nil
}

// pathTo returns the sets on a path from w (first) to a set whose current
// run g is part of, or nil. A set x leads to every set whose lock a goroutine
// of x's run (runGoroutines) holds; with waits, only to those that goroutine
// waits for: the set whose lock it waits for, and the set whose end wait it
// sleeps in. Called with registry.mu held.
func pathTo(w *set, g uintptr, waits bool) []*set {
	type step struct {
		set  *set
		prev int
	}
	sets := liveSets()
	steps := []step{{w, -1}}
	seen := map[*set]bool{w: true}
	for k := 0; k < len(steps); k++ {
		for _, c := range steps[k].set.runGoroutines() {
			if c == g {
				var path []*set
				for j := k; j >= 0; j = steps[j].prev {
					path = append([]*set{steps[j].set}, path...)
				}
				return path
			}
			for _, y := range sets {
				next := y.mu.owner() == c
				if waits {
					next = next && peek.CoordinatorParked(y.crew.Load().d) || registry.waiting[c] == y
				}
				if next && !seen[y] {
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
// workers; an idle one holds and waits for nothing, so it adds no false edge.
func (x *set) runGoroutines() []uintptr {
	var gs []uintptr
	if o := x.mu.owner(); o != 0 {
		gs = append(gs, o)
	}
	c := x.crew.Load()
	for i := range min(int(x.created.Load()), c.max) {
		if wk := c.workers[i].Load(); wk != nil {
			if t := wk.g.Load(); t != 0 {
				gs = append(gs, t)
			}
		}
	}
	return gs
}
