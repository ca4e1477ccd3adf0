// Package mark is the marking of the examples/gc collector, and a worked
// example of workgang's work-distribution toolkit: parallel marking of an
// object graph, the core of a tracing garbage collector, with a serial mark as
// the reference and an errgroup-based static partition for comparison.
//
// A Marker marks a Graph on a Runner (a workers.Workers set, or the peers the
// perf harness compares it with) in two runs, using every piece of the
// toolkit:
//
//   - tasks/policy chooses the worker count of each run: of the clearing from
//     the bitmap's size, of the mark from the number of objects (grow at
//     once, shrink by halves);
//   - a tasks/ranges Task clears the mark bitmap in chunks, the caller
//     helping (tasks.CallerRuns: a small bitmap is cleared inline);
//   - a tasks/batch Batch runs the mark: a serial subtask scans the global
//     roots (claimed once, tasks/claim.Subtasks underneath), a parallel one
//     hands out root "stacks" in order (tasks/claim.Sequential), and a
//     parallel one drains the work with tasks/steal's Set.Drain (a
//     private stack per worker published to its Chase-Lev deque only when
//     another worker is hungry, best-of-two stealing, a Terminator); its
//     cost estimates pick the number of copies;
//   - tasks/phases records per-worker clear, root and drain times, marked
//     objects and steals, printable as HotSpot-style log lines.
//
// MarkSerial is the reference: the marked sets of all three must be
// identical. MarkStatic splits the roots evenly among goroutines of an
// errgroup.Group, each marking depth-first with atomic marks and no
// stealing: what a Go programmer writes first. The perf harness's "mark"
// section and examples/mark time all three on each shape.
package mark

import (
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/batch"
	"github.com/workgang/workgang/tasks/claim"
	"github.com/workgang/workgang/tasks/phases"
	"github.com/workgang/workgang/tasks/policy"
	"github.com/workgang/workgang/tasks/ranges"
	"github.com/workgang/workgang/tasks/steal"
)

// MarkSerial marks every object reachable from g's roots into b (cleared
// first), depth-first with an explicit stack, and returns the number marked.
func MarkSerial(g *Graph, b *Bitmap) int {
	b.Clear()
	stack := make([]uint32, 0, 1024)
	for _, r := range g.roots {
		if b.Mark(r) {
			stack = append(stack, r)
		}
	}
	_, marked := dfs(g, b, stack, false)
	return marked
}

// dfs marks everything reachable from the objects on stack (marked already)
// and returns the emptied stack, for reuse, and the number of objects it
// scanned. It scans an object, continues with its last newly marked child
// directly and stacks the others (all the marks do this, so that a chain of
// single children costs no stack traffic). With atomic it marks with
// MarkAtomic, for marks that run beside others on the same bitmap; without,
// with the plain Mark of a single marker. (The branch on atomic is the same
// way on every child, so it costs next to nothing against the cache misses
// of the marks; BenchmarkMark's serial and static marks run through here.)
func dfs(g *Graph, b *Bitmap, stack []uint32, atomic bool) ([]uint32, int) {
	marked := 0
	for len(stack) > 0 {
		obj := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for {
			marked++
			next, more := uint32(0), false
			for _, c := range g.Children(obj) {
				var fresh bool
				if atomic {
					fresh = b.MarkAtomic(c)
				} else {
					fresh = b.Mark(c)
				}
				if fresh {
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
	return stack, marked
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
			for _, r := range roots[lo:hi] {
				if b.MarkAtomic(r) {
					stack = append(stack, r)
				}
			}
			_, counts[i] = dfs(g, b, stack, true)
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

// Policy units: a graph needs one mark worker per objectsPerWorker objects,
// and a bitmap one clearing worker per wordsPerClearWorker words (below
// these, waking another worker costs more than it saves; see the perf
// harness's grain section for the break-even of a run).
const (
	objectsPerWorker    = 64 << 10
	wordsPerClearWorker = 32 << 10 // 256 KiB of bitmap
)

// Runner runs copies of a task; *workers.Workers is one, and the perf harness
// has peers built on go statements and errgroup. RunN(t, n) must run t.Work(i)
// once for each i in [0, n) and return when all have returned, with package
// workers' memory model: the call synchronized before every copy's start, and
// every copy's return before RunN returns. MaxWorkers is the largest n the
// Marker will ask for.
type Runner interface {
	RunN(t tasks.Task, n int)
	MaxWorkers() int
}

// Marker marks graphs in parallel on a Runner. Create one with NewMarker;
// reuse it for successive marks so that its deques and private stacks keep
// their grown arrays. A Marker is not safe for concurrent use (a mark occupies
// the whole runner).
type Marker struct {
	r      Runner
	policy policy.Active // mark copies, from the objects
	clearP policy.Active // clearing copies, from the bitmap words

	// Per-mark state, read by the copies of the run.
	g     *Graph
	b     *Bitmap
	set   *steal.Set[span]
	term  *steal.Terminator
	sets  []*steal.Set[span]  // by worker count, kept between marks
	terms []*steal.Terminator // by worker count
	task  markTask            // the batch, guarded
	// taskInline is task opted in to caller-runs, for marks of one copy.
	taskInline tasks.Task
	stacks     claim.Sequential
	batch      *batch.Batch
	costs      struct{ drain float64 }
	clear      *ranges.Task // the bitmap clearing, over words
	clearT     tasks.Task   // clear, opted in to caller-runs
	scan       func(l *steal.Local[span], v span)
	alone      bool          // one copy: plain marks, no atomics, no stealing (see drain)
	stack      []uint32      // the stack of a one-copy mark, kept between marks
	marked     []paddedCount // objects scanned, per worker
	steals0    []int64       // Set.Steals per worker before the mark

	clearTime, rootTime, drainTime *phases.Phase[time.Duration]
	markedP, steals                *phases.Phase[int64]
}

// paddedCount is a per-worker counter on its own cache line.
type paddedCount struct {
	n int64
	_ [120]byte
}

// NewMarker returns a Marker that runs on r, using at most r.MaxWorkers()
// copies.
func NewMarker(r Runner) *Marker {
	maxW := r.MaxWorkers()
	m := &Marker{
		r:         r,
		policy:    policy.Active{WorkPerWorker: objectsPerWorker, Max: maxW},
		clearP:    policy.Active{WorkPerWorker: wordsPerClearWorker, Max: maxW},
		clearTime: phases.New[time.Duration]("Clear", maxW),
		rootTime:  phases.New[time.Duration]("Roots", maxW),
		drainTime: phases.New[time.Duration]("Mark", maxW),
		markedP:   phases.New[int64]("Marked", maxW),
		steals:    phases.New[int64]("Steals", maxW),
		marked:    make([]paddedCount, maxW),
		steals0:   make([]int64, maxW),
		sets:      make([]*steal.Set[span], maxW+1),
		terms:     make([]*steal.Terminator, maxW+1),
	}
	m.clear = ranges.NewTask("mark: clear", 0, 1, m.clearChunk)
	m.clearT = tasks.CallerRuns(m.clear)
	m.scan = m.scanObject
	// The root steps cost nothing of their own in the estimate: they run
	// on the copies the drain asks for and are part of its work.
	b := batch.New("mark")
	b.AddSerial(batch.Func("roots: globals", 0, m.scanGlobals))
	b.AddParallel(batch.Func("roots: stacks", 0, m.scanStacks))
	b.AddParallel(drainSubtask{m})
	m.batch = b
	m.task = markTask{m}
	m.taskInline = tasks.CallerRuns(m.task)
	return m
}

// markTask runs the batch, aborting the terminator if a copy fails: a copy
// that panics (a bug, or a fault in the graph) before or during the drain
// would otherwise leave the other copies waiting for its offer forever, the
// run would never end, and RunN could never re-raise the panic. (A panic in
// the drain itself is handled by Drain; this covers the root scans.)
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

// SetObjectsPerWorker sets the mark policy's unit: the number of objects that
// justifies one more mark worker (default 64Ki). It panics if n < 1.
func (m *Marker) SetObjectsPerWorker(n int) {
	if n < 1 {
		panic(fmt.Sprintf("mark: SetObjectsPerWorker(%d): want >= 1", n))
	}
	m.policy.WorkPerWorker = n
}

// SetWordsPerClearWorker sets the clearing policy's unit: the number of bitmap
// words that justifies one more clearing worker (default 32Ki). It panics if n
// < 1.
func (m *Marker) SetWordsPerClearWorker(n int) {
	if n < 1 {
		panic(fmt.Sprintf("mark: SetWordsPerClearWorker(%d): want >= 1", n))
	}
	m.clearP.WorkPerWorker = n
}

// drainSubtask is the batch's drain step; its cost is the worker count the
// policy chose for the graph, so the batch asks for that many copies.
type drainSubtask struct{ m *Marker }

func (d drainSubtask) Name() string    { return "drain" }
func (d drainSubtask) Cost() float64   { return d.m.costs.drain }
func (d drainSubtask) Work(worker int) { d.m.drain(worker) }

// Stats describes one parallel mark.
type Stats struct {
	ClearWorkers int           // copies run to clear the bitmap (with caller-runs, the caller may run several)
	Workers      int           // copies that ran the mark
	Marked       int           // objects marked
	Steals       int64         // values taken from other workers' deques
	Time         time.Duration // wall time of Mark, clearing included
	// Per-worker phase summaries of the mark.
	Clear, Roots, Drain phases.Summary[time.Duration]
	MarkedPerWorker     phases.Summary[int64]
	StealsPerWorker     phases.Summary[int64]
}

// Log returns the phase summaries as HotSpot-style log lines.
func (s Stats) Log() []string {
	return []string{s.Clear.String(), s.Roots.String(), s.Drain.String(), s.MarkedPerWorker.String(), s.StealsPerWorker.String()}
}

// Mark marks every object reachable from g's roots into b, clearing it first,
// and returns what happened. limit caps the copies (0 means MaxWorkers); the
// policies may choose fewer for a small graph or bitmap. b must have room for
// g.Len() objects.
//
// If a copy panics, the mark is aborted and Mark re-raises the panic (see
// workers.Workers.RunN); b is then only partly marked, but the Marker stays
// usable: the values the aborted mark left in its deques are dropped.
func (m *Marker) Mark(g *Graph, b *Bitmap, limit int) Stats {
	start := time.Now()
	if limit <= 0 {
		limit = m.r.MaxWorkers()
	}
	limit = min(limit, m.r.MaxWorkers())
	m.clearTime.Reset()
	m.rootTime.Reset()
	m.drainTime.Reset()
	m.markedP.Reset()
	m.steals.Reset()

	// Clear the bitmap in parallel chunks, the caller helping: a bitmap
	// below the policy's unit is cleared inline.
	m.b = b
	nc := min(m.clearP.Next(b.Words()), limit)
	m.clear.Loop().Reset(b.Words(), ranges.ChunkSize(b.Words(), nc))
	nc = min(nc, max(1, m.clear.Loop().NumChunks()))
	m.r.RunN(m.clearT, nc)

	// Choose the copies: the policy's answer for this many objects is the
	// drain's cost; the batch sums the costs and clamps to limit.
	m.costs.drain = float64(m.policy.Next(g.Len()))
	n := m.batch.Workers(limit)

	if m.sets[n] == nil {
		m.sets[n] = steal.NewSet[span](n)
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
	for w := range n {
		m.steals0[w] = set.Steals(w)
		m.marked[w].n = 0
	}

	// One copy needs no sibling to offer termination with, so it may run
	// on the caller (inline: no worker woken). Several must not: a caller
	// running two copies one after the other would wait in the first for
	// the second's offer.
	var t tasks.Task = m.task
	m.alone = n == 1
	m.stack = m.stack[:0] // an aborted one-copy mark may have left objects
	if m.alone {
		t = m.taskInline
	}
	m.r.RunN(t, n) // returned normally: every copy tried, so ran, every serial subtask
	m.g, m.b = nil, nil
	for w := range n {
		m.steals.Set(w, set.Steals(w)-m.steals0[w])
		m.markedP.Set(w, m.marked[w].n)
	}

	s := Stats{
		Workers:         n,
		Time:            time.Since(start),
		Clear:           m.clearTime.Summary(),
		Roots:           m.rootTime.Summary(),
		Drain:           m.drainTime.Summary(),
		MarkedPerWorker: m.markedP.Summary(),
		StealsPerWorker: m.steals.Summary(),
	}
	s.ClearWorkers = nc
	s.Marked = int(s.MarkedPerWorker.Sum)
	s.Steals = s.StealsPerWorker.Sum
	return s
}

// clearChunk clears words [lo, hi) of the bitmap being marked.
func (m *Marker) clearChunk(w, lo, hi int) {
	t0 := time.Now()
	m.b.ClearWords(lo, hi)
	m.clearTime.Add(w, time.Since(t0))
}

// scanRoots marks roots and queues the newly marked ones for scanning: on the
// deque, where the other copies can steal them at once, or, for a mark of one
// copy, with plain marks onto the private stack (no atomic operation at all:
// nobody else touches the bitmap or the stack during the run, and the run's
// start and end order it with everything else).
func (m *Marker) scanRoots(w int, roots []uint32) {
	b := m.b
	if m.alone {
		for _, r := range roots {
			if b.Mark(r) {
				m.stack = append(m.stack, r)
			}
		}
		return
	}
	for _, r := range roots {
		if b.MarkAtomic(r) {
			m.set.Push(w, span{obj: r})
		}
	}
}

// scanGlobals is the serial subtask: the first globalRoots roots.
func (m *Marker) scanGlobals(w int) {
	t0 := time.Now()
	m.scanRoots(w, m.g.roots[:min(globalRoots, len(m.g.roots))])
	m.rootTime.Add(w, time.Since(t0))
}

// scanStacks is the parallel root subtask: the remaining roots in stacks of
// stackRoots, handed out in order.
func (m *Marker) scanStacks(w int) {
	t0 := time.Now()
	roots := m.g.roots
	for i := range m.stacks.All() {
		lo := globalRoots + i*stackRoots
		m.scanRoots(w, roots[lo:min(lo+stackRoots, len(roots))])
	}
	m.rootTime.Add(w, time.Since(t0))
}

// drain is the stealing loop, steal.Set.Drain: newly marked objects go
// to the worker's private stack (plain appends), and are published to its
// deque only when another worker is hungry.
func (m *Marker) drain(w int) {
	t0 := time.Now()
	if m.alone {
		// One copy has nobody to steal from or to terminate with: the
		// drain is MarkSerial's loop, on the roots scanRoots stacked.
		var n int
		m.stack, n = dfs(m.g, m.b, m.stack, false)
		m.marked[w].n += int64(n)
	} else {
		m.set.Drain(w, m.term, m.scan)
	}
	m.drainTime.Set(w, time.Since(t0))
}

// chainMax is how many objects scanObject scans in one call at most, going
// from an object straight to its last newly marked child instead of through
// the private stack: a chain (a list) then costs no stack traffic and no call
// per object, while Drain still gets to publish work for the hungry, and
// to notice an abort, every chainMax objects.
const chainMax = 32

// span is a value of the stealing mark: the children of obj from index from
// on. A fresh object is span{obj, 0}; an object with more than hubChunk
// children is scanned hubChunk children at a time, the rest going back to the
// private stack as a span of its own, where a hungry worker can get it
// (HotSpot splits large object arrays the same way).
type span struct{ obj, from uint32 }

// hubChunk is how many children of one object scanObject marks per call: a
// hub of a power-law graph has tens of thousands, which would otherwise go to
// one worker's private stack in one call.
const hubChunk = 512

// scanObject scans a marked object: it marks each unmarked child, pushes all
// but the last of them to the private stack and goes on with the last one,
// for up to chainMax objects. An object with more than hubChunk children left
// is scanned in part, the rest pushed back as a span.
func (m *Marker) scanObject(l *steal.Local[span], v span) {
	b, g := m.b, m.g
	obj := v.obj
	scanned := int64(0)
	if v.from == 0 {
		scanned = 1 // counted once, at its first span
	}
	children := g.Children(obj)[v.from:]
	for {
		if len(children) > hubChunk {
			l.Push(span{obj: obj, from: uint32(len(g.Children(obj)) - len(children) + hubChunk)})
			children = children[:hubChunk]
		}
		next, more := uint32(0), false
		for _, c := range children {
			if b.MarkAtomic(c) {
				if more {
					l.Push(span{obj: next})
				}
				next, more = c, true
			}
		}
		if !more {
			break
		}
		if scanned == chainMax {
			l.Push(span{obj: next})
			break
		}
		obj = next
		scanned++
		children = g.Children(obj)
	}
	m.marked[l.Worker()].n += scanned
}
