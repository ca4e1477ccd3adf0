package workers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/workgang/workgang/internal/peek"
)

// The cycle check. A copy of a run on set A that starts a run on B waits for
// B; if B's run, or one it waits for in turn, has a copy that starts a run on
// A, none can finish. lockSlow catches A -> A; longer cycles need this view of
// every set, consulted only by a goroutine inside a run that finds a lock taken.
//
// The wait-for graph is implicit: a set waits for the goroutines of its run
// (workers, lock holder); a goroutine waits for the set whose lock it queues
// for (waiting), and for the set it holds while parked in its end wait
// (internal/peek). A goroutine about to block on W closes a cycle iff W
// reaches it. The graph changes as it is read, so a nested waiter re-checks
// on a timer and panics only on a cycle found for a millisecond.
//
// Sets are held weakly from New to Close, so a set dropped without Close is
// still collected; register prunes dead entries whenever the map doubled.
var registry = struct {
	mu      sync.Mutex
	sets    map[weak.Pointer[Workers]]struct{}
	pruneAt int                 // prune when len(sets) reaches this
	waiting map[uint64]*Workers // goroutine token -> the set whose lock it waits for, nested waiters only
}{sets: map[weak.Pointer[Workers]]struct{}{}, waiting: map[uint64]*Workers{}}

func register(w *Workers) {
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

func unregister(w *Workers) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	delete(registry.sets, weak.Make(w))
}

// liveSets returns the registered sets. Called with registry.mu held.
func liveSets() []*Workers {
	sets := make([]*Workers, 0, len(registry.sets))
	for wp := range registry.sets {
		if x := wp.Value(); x != nil {
			sets = append(sets, x)
		}
	}
	return sets
}

// insideAnyRun reports whether goroutine g is some set's worker or holder.
func insideAnyRun(g uint64) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, x := range liveSets() {
		if slices.Contains(x.runGoroutines(), g) {
			return true
		}
	}
	return false
}

// insideRunOf reports whether goroutine g is part of w's run, directly or
// through nested runs. It errs towards "inside" (nothing records which of two
// held sets is the outer): a last release panics rather than close a run's set.
func insideRunOf(w *Workers, g uint64) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return pathTo(w, g, false) != nil
}

// waitLock queues goroutine g (token tok) for w's lock. A nested waiter
// checks for a cycle, backing off from 10 us to a millisecond, and panics
// once one is confirmed, unless it got the lock meanwhile. With ctx done it
// returns ctx's cause holding nothing. Stats counts runs' waits.
func (w *Workers) waitLock(op string, g, tok uint64, nested bool, ctx context.Context) error {
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
	if op != "Close" && op != "Acquire" { // a run: count its wait
		defer func() {
			w.waits.Add(1)
			w.waitNanos.Add(uint64(time.Since(start)))
		}()
	}
	var timer *time.Timer
	var check <-chan time.Time // nil (never ready) unless nested
	backoff := 10 * time.Microsecond
	if nested {
		registry.mu.Lock()
		registry.waiting[g] = w
		registry.mu.Unlock()
		defer func() {
			registry.mu.Lock()
			delete(registry.waiting, g)
			registry.mu.Unlock()
		}()
		timer = time.NewTimer(backoff)
		defer timer.Stop()
		check = timer.C
	}
	var since time.Time // since when the checks found a cycle
	for {
		select {
		case <-wt.ready:
			return w.gotLock(ctx)
		case <-done:
			if w.mu.abandon(wt) {
				w.mu.unlock() // handed to it meanwhile: pass it on
			}
			return context.Cause(ctx)
		case <-check:
		}
		registry.mu.Lock()
		path := pathTo(w, g, true)
		registry.mu.Unlock()
		// Confirm a cycle's existence, not its path, which may vary.
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

// gotLock ends a wait that got the lock; with ctx done, it passes it on.
func (w *Workers) gotLock(ctx context.Context) error {
	if ctx.Err() != nil {
		w.mu.unlock()
		return context.Cause(ctx)
	}
	return nil
}

// pathTo returns the sets on a path from w to a set whose run g is part of,
// or nil. x leads to every set whose lock a goroutine of x's run holds; with
// waits, only to those it waits for. Called with registry.mu held.
func pathTo(w *Workers, g uint64, waits bool) []*Workers {
	type step struct {
		set  *Workers
		prev int
	}
	sets := liveSets()
	steps := []step{{w, -1}}
	seen := map[*Workers]bool{w: true}
	for k := 0; k < len(steps); k++ {
		for _, c := range steps[k].set.runGoroutines() {
			if waits && c == anonToken {
				// Every unidentified holder has it: an edge would join
				// unrelated sets into a false cycle (insideRunOf keeps it).
				continue
			}
			if c == g {
				var path []*Workers
				for j := k; j >= 0; j = steps[j].prev {
					path = append([]*Workers{steps[j].set}, path...)
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

// runGoroutines returns the goroutines x's run waits for: its lock's holder
// and its live workers (an idle one adds no false edge). It allocates.
func (x *Workers) runGoroutines() []uint64 {
	var gs []uint64
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
