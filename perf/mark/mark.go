// Package mark is a worked example of workgang's work-distribution toolkit:
// parallel marking of a synthetic object graph, the core of a tracing garbage
// collector, with a serial mark as the reference and an errgroup-based static
// partition for comparison.
//
// A Marker marks a Graph on a workers.Workers set in two runs, using every
// piece of the toolkit:
//
//   - tasks/policy chooses the worker count from the number of objects (grow
//     at once, shrink by halves) under policy.DefaultMaxWorkers;
//   - workers.ForRange (tasks/ranges) clears the mark bitmap in chunks;
//   - a tasks/batch Batch runs the mark: a serial subtask scans the global
//     roots (claimed once, tasks/claim.Subtasks underneath), a parallel one
//     hands out root "stacks" in order (tasks/claim.Sequential), and a
//     parallel one drains the work with tasks/steal (one Chase-Lev deque per
//     worker, best-of-two stealing, a Terminator); its cost estimates pick
//     the number of copies;
//   - tasks/phases records per-worker root and drain times, marked objects
//     and steals, printable as HotSpot-style log lines.
//
// MarkSerial is the reference: the marked sets of all three must be
// identical. MarkStatic splits the roots evenly among goroutines of an
// errgroup.Group, each marking depth-first with atomic marks and no
// stealing: what a Go programmer writes first. Section runs all three on
// each shape and reports medians and speedups; it is the perf harness's
// "mark" section and the body of examples/mark.
package mark

import (
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workgang/workgang/tasks/batch"
	"github.com/workgang/workgang/tasks/claim"
	"github.com/workgang/workgang/tasks/phases"
	"github.com/workgang/workgang/tasks/policy"
	"github.com/workgang/workgang/tasks/steal"
	"github.com/workgang/workgang/workers"
)

// MarkSerial marks every object reachable from g's roots into b (cleared
// first), depth-first with an explicit stack, and returns the number marked.
func MarkSerial(g *Graph, b *Bitmap) int {
	b.Clear()
	stack := make([]uint32, 0, 1024)
	marked := 0
	for _, r := range g.roots {
		if b.mark(r) {
			stack = append(stack, r)
		}
	}
	for len(stack) > 0 {
		obj := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for {
			// Scan obj; continue with its last newly marked child
			// directly and stack the others (all three marks do this,
			// so that a chain of single children costs no stack traffic).
			marked++
			next, more := uint32(0), false
			for _, c := range g.Children(obj) {
				if b.mark(c) {
					if more {
						stack = append(stack, next)
					}
					next, more = c, true
				}
			}
			if !more {
				break
			}
			obj = next
		}
	}
	return marked
}

// MarkStatic marks like MarkSerial with p goroutines of an errgroup.Group:
// goroutine i takes the i-th of p equal slices of the roots and marks
// depth-first from them with atomic marks, never sharing work. It returns the
// number marked.
func MarkStatic(g *Graph, b *Bitmap, p int) (int, error) {
	if p < 1 {
		return 0, fmt.Errorf("mark: MarkStatic: p = %d, want >= 1", p)
	}
	b.Clear()
	counts := make([]int, p)
	var eg errgroup.Group
	roots := g.roots
	for i := range p {
		lo, hi := i*len(roots)/p, (i+1)*len(roots)/p
		eg.Go(func() error {
			stack := make([]uint32, 0, 1024)
			marked := 0
			for _, r := range roots[lo:hi] {
				if b.markAtomic(r) {
					stack = append(stack, r)
				}
			}
			for len(stack) > 0 {
				obj := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for {
					marked++
					next, more := uint32(0), false
					for _, c := range g.Children(obj) {
						if b.markAtomic(c) {
							if more {
								stack = append(stack, next)
							}
							next, more = c, true
						}
					}
					if !more {
						break
					}
					obj = next
				}
			}
			counts[i] = marked
			return nil
		})
	}
	err := eg.Wait()
	total := 0
	for _, c := range counts {
		total += c
	}
	return total, err
}

// globalRoots is how many leading roots count as "globals", scanned by one
// serial subtask; the rest form stacks of stackRoots roots each.
const (
	globalRoots = 16
	stackRoots  = 64
)

// publishMax caps how many objects a worker moves from its private stack to
// its deque at a time: thieves take one object at a time, and one object of a
// connected graph usually leads to a large subgraph, so a few dozen keep them
// busy while the owner goes on with cheap private pushes.
const publishMax = 32

// abortEvery is how many objects a drain takes (from its private stack or
// deque; each starts a chain of scans) between two checks for an abort: a
// power of two, so the check is an AND and a branch per object taken.
const abortEvery = 64

// objectsPerWorker is the policy's unit: a graph needs one worker per this
// many objects (below it, waking a second worker costs more than it saves).
const objectsPerWorker = 64 << 10

// Marker marks graphs in parallel on a worker set. Create one with NewMarker;
// reuse it for successive marks so that its deques keep their grown arrays. A
// Marker is not safe for concurrent use (a mark occupies the whole set).
type Marker struct {
	w      *workers.Workers
	policy policy.Active

	// Per-mark state, read by the copies of the run.
	g      *Graph
	b      *Bitmap
	set    *steal.Set[uint32]
	term   *steal.Terminator
	sets   []*steal.Set[uint32] // by worker count, kept between marks
	terms  []*steal.Terminator  // by worker count
	task   markTask             // the batch, guarded
	stacks claim.Sequential
	batch  *batch.Batch
	costs  struct{ drain float64 }
	clear  func(worker, lo, hi int) // m.clearChunk, bound once
	locals [][]uint32               // per-worker private mark stacks, kept between marks

	rootTime, drainTime *phases.Times
	marked, steals      *phases.Counts
}

// NewMarker returns a Marker that runs on w, using at most w.MaxWorkers()
// workers.
func NewMarker(w *workers.Workers) *Marker {
	m := &Marker{
		w:         w,
		policy:    policy.Active{WorkPerWorker: objectsPerWorker, Max: w.MaxWorkers()},
		rootTime:  phases.NewTimes("Roots", w.MaxWorkers()),
		drainTime: phases.NewTimes("Drain", w.MaxWorkers()),
		marked:    phases.NewCounts("Marked", w.MaxWorkers()),
		steals:    phases.NewCounts("Steals", w.MaxWorkers()),
	}
	m.clear = m.clearChunk
	m.locals = make([][]uint32, w.MaxWorkers())
	m.sets = make([]*steal.Set[uint32], w.MaxWorkers()+1)
	m.terms = make([]*steal.Terminator, w.MaxWorkers()+1)
	// The root steps cost nothing of their own in the estimate: they run
	// on the copies the drain asks for and are part of its work.
	b := batch.New("mark")
	b.AddSerial(batch.Func("roots: globals", 0, m.scanGlobals))
	b.AddParallel(batch.Func("roots: stacks", 0, m.scanStacks))
	b.AddParallel(drainSubtask{m})
	m.batch = b
	m.task = markTask{m}
	return m
}

// markTask runs the batch, aborting the terminator if a copy fails: a copy
// that panics (a bug, or a fault in the graph) before or during the drain
// would otherwise leave the other copies waiting for its offer forever, the
// run would never end, and RunN could never re-raise the panic.
type markTask struct{ m *Marker }

func (t markTask) Name() string { return "mark" }

func (t markTask) Work(worker int) {
	returned := false
	defer func() {
		if !returned {
			t.m.term.Abort() // no recover: the panic keeps its stack
		}
	}()
	t.m.batch.Work(worker)
	returned = true
}

// SetObjectsPerWorker sets the policy's unit: the number of objects that
// justifies one more worker (default 64Ki). It panics if n < 1.
func (m *Marker) SetObjectsPerWorker(n int) {
	if n < 1 {
		panic(fmt.Sprintf("mark: SetObjectsPerWorker(%d): want >= 1", n))
	}
	m.policy.WorkPerWorker = n
}

// drainSubtask is the batch's drain step; its cost is the worker count the
// policy chose for the graph, so the batch asks for that many copies.
type drainSubtask struct{ m *Marker }

func (d drainSubtask) Name() string    { return "drain" }
func (d drainSubtask) Cost() float64   { return d.m.costs.drain }
func (d drainSubtask) Work(worker int) { d.m.drain(worker) }

// Stats describes one parallel mark.
type Stats struct {
	Workers int           // copies that ran the mark
	Marked  int           // objects marked
	Steals  int64         // values taken from other workers' deques
	Time    time.Duration // wall time of Mark, clearing included
	// Per-worker phase summaries of the mark.
	Roots, Drain    phases.Summary[time.Duration]
	MarkedPerWorker phases.Summary[int64]
	StealsPerWorker phases.Summary[int64]
}

// Log returns the phase summaries as HotSpot-style log lines.
func (s Stats) Log() []string {
	return []string{s.Roots.String(), s.Drain.String(), s.MarkedPerWorker.String(), s.StealsPerWorker.String()}
}

// Mark marks every object reachable from g's roots into b, clearing it first,
// and returns what happened. limit caps the copies (0 means the set's
// ActiveWorkers); the policy may choose fewer for a small graph.
//
// If a copy panics, the mark is aborted and Mark re-raises the panic (see
// workers.Workers.RunN); b is then only partly marked, but the Marker stays
// usable: the values the aborted mark left in its deques are dropped.
func (m *Marker) Mark(g *Graph, b *Bitmap, limit int) Stats {
	start := time.Now()
	if limit <= 0 {
		limit = m.w.ActiveWorkers()
	}
	limit = min(limit, m.w.MaxWorkers())

	// Clear the bitmap in parallel chunks, the caller helping.
	m.b = b
	m.w.ForRange(b.Words(), m.clear, workers.WithCopies(limit), workers.WithCallerRuns())

	// Choose the copies: the policy's answer for this many objects is the
	// drain's cost; the batch sums the costs and clamps to limit.
	m.costs.drain = float64(m.policy.Next(g.Len()))
	n := m.batch.Workers(limit)

	if m.sets[n] == nil {
		m.sets[n] = steal.NewSet[uint32](n)
		m.terms[n] = steal.NewTerminator(n, m.sets[n].HasWork)
	}
	m.set, m.term = m.sets[n], m.terms[n]
	m.term.Reset()
	// An aborted mark may leave objects in the deques (the copies stop
	// early); the next mark with this set would scan them again, or, for
	// another graph, scan objects that are not even its own. Clear them
	// once RunN has returned (it does, re-raising the panic, only after
	// every copy has stopped): no copy runs, and the next run's start
	// orders the clearing before its steals.
	set, term := m.set, m.term
	defer func() {
		if term.Aborted() {
			set.Clear()
		}
	}()
	m.g = g
	m.stacks.Reset(max(0, (len(g.roots)-globalRoots+stackRoots-1)/stackRoots))
	m.batch.Reset()
	m.rootTime.Reset()
	m.drainTime.Reset()
	m.marked.Reset()
	m.steals.Reset()

	m.w.RunN(m.task, n)
	if err := m.batch.Check(); err != nil {
		panic(err) // unreachable: RunN would have re-raised a copy's panic
	}
	m.g, m.b = nil, nil

	s := Stats{
		Workers:         n,
		Time:            time.Since(start),
		Roots:           m.rootTime.Summary(),
		Drain:           m.drainTime.Summary(),
		MarkedPerWorker: m.marked.Summary(),
		StealsPerWorker: m.steals.Summary(),
	}
	s.Marked = int(s.MarkedPerWorker.Sum)
	s.Steals = s.StealsPerWorker.Sum
	return s
}

// clearChunk clears words [lo, hi) of the bitmap being marked.
func (m *Marker) clearChunk(_, lo, hi int) { m.b.clearRange(lo, hi) }

// scanGlobals is the serial subtask: the first globalRoots roots.
func (m *Marker) scanGlobals(w int) {
	t0 := time.Now()
	q := m.set.Queue(w)
	for _, r := range m.g.roots[:min(globalRoots, len(m.g.roots))] {
		if m.b.markAtomic(r) {
			q.Push(r)
		}
	}
	m.rootTime.Add(w, time.Since(t0))
}

// scanStacks is the parallel root subtask: the remaining roots in stacks of
// stackRoots, handed out in order.
func (m *Marker) scanStacks(w int) {
	t0 := time.Now()
	q := m.set.Queue(w)
	roots := m.g.roots
	for i := range m.stacks.All() {
		lo := globalRoots + i*stackRoots
		for _, r := range roots[lo:min(lo+stackRoots, len(roots))] {
			if m.b.markAtomic(r) {
				q.Push(r)
			}
		}
	}
	m.rootTime.Add(w, time.Since(t0))
}

// drain is the stealing loop: take from the private stack, else pop the own
// deque, else steal, else offer termination. Like steal.Set.Drain it stops
// early when the mark is aborted (a copy panicked): it checks before every
// steal and every abortEvery objects taken, so that the panic comes back
// without the rest of the graph being marked first.
func (m *Marker) drain(w int) {
	t0 := time.Now()
	g, b, set := m.g, m.b, m.set
	q := set.Queue(w)
	// The private stack is local[lo:]: newly marked objects go there first,
	// with plain appends instead of the deque's atomic stores. Whenever the
	// deque is empty (thieves took what it held, or nothing was shared
	// yet), the older half of the private stack, at most publishMax
	// objects, is published to it with one PushSlice. Thieves thus always find work while this worker has
	// more than it needs, and the oldest objects, nearest the roots of the
	// traversal and so the biggest pieces, are the ones they get.
	local, lo := m.locals[w][:0], 0
	share := set.Len() > 1 // alone, there is nobody to share with
	var marked, steals int64
	for taken := uint(1); ; taken++ {
		if taken%abortEvery == 0 && m.term.Aborted() {
			break
		}
		var obj uint32
		if len(local) > lo {
			obj = local[len(local)-1]
			local = local[:len(local)-1]
		} else if v, ok := q.Pop(); ok {
			obj = v
		} else if m.term.Aborted() {
			break
		} else if v, ok := set.Steal(w); ok {
			obj = v
			steals++
		} else if m.term.Offer() {
			break
		} else {
			continue
		}
		if len(local) == lo {
			local, lo = local[:0], 0
		}
		for {
			// Scan obj; continue with its last newly marked child
			// directly, so that a chain (a list) costs no stack
			// traffic at all.
			marked++
			next, more := uint32(0), false
			for _, c := range g.Children(obj) {
				if b.markAtomic(c) {
					if more {
						local = append(local, next)
					}
					next, more = c, true
				}
			}
			if share && len(local)-lo > 1 && q.Empty() {
				h := min((len(local)-lo)/2, publishMax)
				q.PushSlice(local[lo : lo+h])
				lo += h
				if lo > len(local)/2 {
					// Reclaim the published prefix.
					n := copy(local, local[lo:])
					local, lo = local[:n], 0
				}
			}
			if !more {
				break
			}
			obj = next
		}
	}
	m.locals[w] = local[:0]
	m.drainTime.Set(w, time.Since(t0))
	m.marked.Set(w, marked)
	m.steals.Set(w, steals)
}
