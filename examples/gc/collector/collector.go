// Package collector is the examples/gc collector: a stop-the-world, parallel
// mark-sweep garbage collector for the simulated heap of package heap, built
// on workgang's toolkit the way HotSpot's Parallel GC and G1 build their
// pauses on WorkerThreads.
//
// A collection (Collect) is one pause made of phases with different
// parallelism, each phase's worker count chosen by its own tasks/policy
// Active from the amount of work it faces:
//
//   - Clear: the mark bitmap is cleared in parallel ranges (tasks/ranges),
//     the caller helping; a small bitmap is cleared inline;
//   - Roots and Mark: one batched run (tasks/batch, the costs picking the
//     copies): a serial subtask scans the global roots, a parallel one hands
//     out root groups (tasks/claim), and a parallel one marks with work
//     stealing (tasks/steal: Set.Drain and a Terminator); see package
//     mark;
//   - Weak refs: reference processing, a serial step run as a caller-runs
//     task of one copy (inline: no worker is woken);
//   - Sweep: parallel ranges over the allocation bitmap, each chunk making
//     the allocated set the marked set and listing its free slots;
//   - Free list: the chunks' lists are concatenated in parallel into the
//     heap's free list, at offsets the coordinator computes.
//
// Per-worker times and counts of every phase are kept with tasks/phases and
// printed by Stats.Log as one line per phase, like HotSpot's -Xlog:gc+phases.
// The phases run on a mark.Runner: a workers.Workers set, or the peers (go
// statements, errgroup) the perf harness compares it with. heap.Collect is
// the serial reference; the examples/gc command and the tests check every
// cycle against it (heap.Diff).
package collector

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/examples/gc/heap"
	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/phases"
	"github.com/workgang/workgang/tasks/policy"
	"github.com/workgang/workgang/tasks/ranges"
)

// Policy units: one sweep worker per sweepWordsPerWorker allocation words
// (64 slots each), one free-list worker per freePerWorker free slots. Below
// them, a phase is shorter than waking a worker costs (see the perf harness's
// grain section for the break-even of a run).
const (
	sweepWordsPerWorker = 2048      // 128Ki slots
	freePerWorker       = 256 << 10 // 1 MiB of free list
)

// Collector collects heaps on a Runner. Create one with New; reuse it, so that
// its buffers and the marker's deques keep their grown arrays. A Collector is
// not safe for concurrent use: a collection occupies the whole runner.
type Collector struct {
	r      mark.Runner
	marker *mark.Marker
	b      *mark.Bitmap
	cycles int

	sweepP, freeP policy.Active

	// Per-collection state, read by the copies of a run.
	h              *heap.Heap
	buf            []uint32 // the sweep's output: chunk c's free slots at buf[64*lo:]
	chunkFree      []int    // free slots found per sweep chunk
	sweepChunkSize int      // the sweep's chunk, in allocation words
	offsets        []int    // chunk c's free slots go to the free list at offsets[c]
	list           []uint32 // the free list being filled
	result         heap.Result

	sweep, copyFree *ranges.Task
	sweepT, copyT   tasks.Task // opted in to caller-runs
	weakT           tasks.Task

	weakTime, sweepTime, freeTime *phases.Phase[time.Duration]
	freed                         *phases.Phase[int64]
}

// New returns a Collector that runs its phases on r.
func New(r mark.Runner) *Collector {
	maxW := r.MaxWorkers()
	c := &Collector{
		r:         r,
		marker:    mark.NewMarker(r),
		sweepP:    policy.Active{WorkPerWorker: sweepWordsPerWorker, Max: maxW},
		freeP:     policy.Active{WorkPerWorker: freePerWorker, Max: maxW},
		weakTime:  phases.New[time.Duration]("Weak refs", 1),
		sweepTime: phases.New[time.Duration]("Sweep", maxW),
		freeTime:  phases.New[time.Duration]("Free list", maxW),
		freed:     phases.New[int64]("Freed", maxW),
	}
	c.sweep = ranges.NewTask("gc: sweep", 0, 1, c.sweepChunk)
	c.sweepT = tasks.CallerRuns(c.sweep)
	c.copyFree = ranges.NewTask("gc: free list", 0, 1, c.copyChunks)
	c.copyT = tasks.CallerRuns(c.copyFree)
	c.weakT = tasks.CallerRuns(tasks.Func("gc: weak refs", c.processWeak))
	return c
}

// Units are the policies' units: in each phase, the amount of work that
// justifies one more worker. A zero field keeps the current value. Tests set
// small units to run small heaps on several workers.
type Units struct {
	ClearWords  int // bitmap words (default 32Ki)
	MarkObjects int // heap slots (default 64Ki)
	SweepWords  int // allocation words of 64 slots (default 2Ki)
	FreeSlots   int // free slots (default 256Ki)
}

// SetUnits sets the policies' units. It panics if a field is negative.
func (c *Collector) SetUnits(u Units) {
	if u.ClearWords < 0 || u.MarkObjects < 0 || u.SweepWords < 0 || u.FreeSlots < 0 {
		panic(fmt.Sprintf("collector: SetUnits(%+v): negative unit", u))
	}
	if u.ClearWords > 0 {
		c.marker.SetWordsPerClearWorker(u.ClearWords)
	}
	if u.MarkObjects > 0 {
		c.marker.SetObjectsPerWorker(u.MarkObjects)
	}
	if u.SweepWords > 0 {
		c.sweepP.WorkPerWorker = u.SweepWords
	}
	if u.FreeSlots > 0 {
		c.freeP.WorkPerWorker = u.FreeSlots
	}
}

// Stats describes one collection.
type Stats struct {
	Cycle  int           // 1 for the collector's first collection
	Pause  time.Duration // the whole collection, wall time
	Slots  int
	Before int // allocated slots before the collection, Null included
	heap.Result
	// Workers per phase.
	ClearWorkers, MarkWorkers, SweepWorkers, FreeWorkers int
	// Per-worker phase summaries.
	Mark                  mark.Stats
	Weak, Sweep, FreeList phases.Summary[time.Duration]
	FreedPerWorker        phases.Summary[int64]
}

// Log returns the collection as log lines in the style of HotSpot's
// -Xlog:gc+phases: a line for the pause, then one per phase with the
// minimum, average, maximum, spread and sum over the workers that ran it.
func (s Stats) Log() []string {
	lines := []string{fmt.Sprintf("GC(%d) Pause %.3fms: live %d -> %d of %d slots, freed %d, weak refs cleared %d, dropped %d",
		s.Cycle, float64(s.Pause)/float64(time.Millisecond), s.Before, s.Marked, s.Slots, s.Freed, s.Cleared, s.Dropped)}
	for _, l := range []string{
		s.Mark.Clear.String(), s.Mark.Roots.String(), s.Mark.Drain.String(),
		s.Mark.MarkedPerWorker.String(), s.Mark.StealsPerWorker.String(),
		s.Weak.String(), s.Sweep.String(), s.FreedPerWorker.String(), s.FreeList.String(),
	} {
		lines = append(lines, fmt.Sprintf("GC(%d)   %s", s.Cycle, l))
	}
	return lines
}

// Collect collects h: it marks what its roots reach, clears and drops weak
// references, frees every unmarked object and rebuilds the free list (in
// increasing slot order). The result is the one heap.Collect gives. If a
// copy panics, Collect re-raises the panic (see workers.Workers.RunN) and h
// is left partly collected.
func (c *Collector) Collect(h *heap.Heap) Stats {
	start := time.Now()
	c.cycles++
	s := Stats{Cycle: c.cycles, Slots: h.Slots(), Before: h.Live()}
	if c.b == nil || c.b.Len() < h.Slots() {
		c.b = mark.NewBitmap(h.Slots())
		c.buf = make([]uint32, 64*h.Words())
	}
	c.h = h
	c.result = heap.Result{}
	c.weakTime.Reset()
	c.sweepTime.Reset()
	c.freeTime.Reset()
	c.freed.Reset()
	limit := c.r.MaxWorkers()

	// Clear, Roots, Mark.
	s.Mark = c.marker.Mark(h.Graph(), c.b, limit)
	s.ClearWorkers, s.MarkWorkers = s.Mark.ClearWorkers, s.Mark.Workers

	// Weak refs: serial, inline on a set (caller-runs with one copy).
	c.r.RunN(c.weakT, 1)

	// Sweep: parallel ranges over the allocation words.
	words := h.Words()
	n := c.sweepP.Next(words)
	chunk := ranges.ChunkSize(words, n)
	c.sweep.Loop().Reset(words, chunk)
	c.sweepChunkSize = chunk
	chunks := c.sweep.Loop().NumChunks()
	if cap(c.chunkFree) < chunks {
		c.chunkFree = make([]int, chunks)
		c.offsets = make([]int, chunks)
	}
	c.chunkFree, c.offsets = c.chunkFree[:chunks], c.offsets[:chunks]
	s.SweepWorkers = min(n, chunks)
	c.r.RunN(c.sweepT, s.SweepWorkers)

	// Free list: offsets on the coordinator (one add per chunk), then the
	// copies in parallel.
	total := 0
	for i, k := range c.chunkFree {
		c.offsets[i] = total
		total += k
	}
	c.list = h.FreeList(total)
	c.copyFree.Loop().Reset(chunks, 1)
	s.FreeWorkers = min(c.freeP.Next(total), chunks)
	c.r.RunN(c.copyT, s.FreeWorkers)
	c.h, c.list = nil, nil

	s.Pause = time.Since(start)
	s.Result = c.result
	s.Marked = s.Mark.Marked
	s.Free = total
	s.Weak = c.weakTime.Summary()
	s.Sweep = c.sweepTime.Summary()
	s.FreeList = c.freeTime.Summary()
	s.FreedPerWorker = c.freed.Summary()
	s.Freed = int(s.FreedPerWorker.Sum)
	return s
}

// processWeak is the serial step.
func (c *Collector) processWeak(w int) {
	t0 := time.Now()
	c.result.Cleared, c.result.Dropped = c.h.ProcessWeak(c.b)
	c.weakTime.Set(w, time.Since(t0))
}

// sweepChunk sweeps allocation words [lo, hi): one chunk of the sweep. Each
// chunk writes its own part of buf and its own entry of chunkFree.
func (c *Collector) sweepChunk(w, lo, hi int) {
	t0 := time.Now()
	free, freed := c.h.SweepWords(c.b, lo, hi, c.buf[64*lo:64*hi])
	c.chunkFree[lo/c.sweepChunkSize] = free
	c.freed.Add(w, int64(freed))
	c.sweepTime.Add(w, time.Since(t0))
}

// copyChunks moves the free slots of sweep chunks [lo, hi) to their place in
// the free list; the places are disjoint.
func (c *Collector) copyChunks(w, lo, hi int) {
	t0 := time.Now()
	chunk := 64 * c.sweepChunkSize
	for i := lo; i < hi; i++ {
		copy(c.list[c.offsets[i]:], c.buf[i*chunk:i*chunk+c.chunkFree[i]])
	}
	c.freeTime.Add(w, time.Since(t0))
}
