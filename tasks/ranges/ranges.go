// Package ranges splits a loop over [0, n) into chunks that the copies of a
// task claim atomically, so that a fast copy takes more chunks than a slow
// one (dynamic scheduling in OpenMP's terms, the self-scheduling loop of
// Go's old runtime parfor).
//
// A Loop is the shared state of one loop: n, the chunk size and the index of
// the next unclaimed iteration. Every copy drains it:
//
//	for lo, hi := range loop.Chunks() {
//		for i := lo; i < hi; i++ {
//			body(i)
//		}
//	}
//
// A claim is one atomic add, so the chunk size trades balance (small chunks)
// against contention on that word (large chunks); ChunkSize picks a default
// from n and the worker count. Loop and its iterators are allocation-free.
//
// Guided is the same loop with chunks that shrink as it drains (OpenMP's
// guided schedule): each claim takes max(minChunk, remaining/(2*copies))
// iterations with one compare-and-swap, so a loop costs few claims and the
// small chunks at its end even out copies that started late.
//
// Package workers' ForRange runs such a loop on a worker set in one call.
//
// The package imports only the standard library and internal/pad.
package ranges

import (
	"fmt"
	"iter"
	"math"
	"sync/atomic"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/tasks"
)

// ChunksPerWorker is the number of chunks per worker ChunkSize aims for: enough
// that a copy which starts late or runs slow is made up for by the others
// (with one chunk per worker the slowest copy sets the pace), few enough that
// the claims cost nothing next to any real loop body.
const ChunksPerWorker = 8

// ChunkSize returns the default chunk size for a loop of n iterations run by
// the given number of workers: ceil(n / (workers * ChunksPerWorker)), at least
// 1. The arithmetic cannot overflow: a product workers * ChunksPerWorker past
// MaxInt counts as MaxInt. It panics if n is negative or workers < 1.
func ChunkSize(n, workers int) int {
	if n < 0 {
		panic(fmt.Sprintf("ranges: ChunkSize: negative length %d", n))
	}
	if workers < 1 {
		panic(fmt.Sprintf("ranges: ChunkSize: workers = %d, want >= 1", workers))
	}
	per := math.MaxInt
	if workers <= math.MaxInt/ChunksPerWorker {
		per = workers * ChunksPerWorker
	}
	return max(1, ceilDiv(n, per))
}

// ceilDiv returns ceil(a / b) for a >= 0, b >= 1 with one division and
// without forming a + b - 1, which overflows near MaxInt.
func ceilDiv[T int | uint64](a, b T) T {
	if a == 0 {
		return 0
	}
	return (a-1)/b + 1
}

// Loop is a loop over [0, n) handed out in chunks of a fixed size. The zero
// value is an empty loop; Reset (or NewLoop) gives it a length. Next and the
// iterators are safe for concurrent use; Reset is not (call it between runs,
// see package claim for why a claim must belong to one run). A Loop must not
// be copied after first use.
//
// Memory model: claiming orders nothing; the iterations' writes are published
// to the caller by whatever runs the copies (package workers' Run).
type Loop struct {
	// next is the index of the next unclaimed chunk. n, chunk and chunks
	// share its line on purpose: every claim reads them and writes next, so
	// one line moves per claim. The pads keep the neighbours of an enclosing
	// struct off it.
	//
	// Counting chunks rather than iterations keeps every bound in range for
	// any n and chunk: a claim adds 1, so next could only wrap after 2^64
	// claims (centuries at one per nanosecond), and chunk i starts at
	// i*chunk < n only for i < chunks.
	_      pad.Line
	next   atomic.Uint64
	n      uint64 // read-only during a run; <= MaxInt64
	chunk  uint64 // read-only during a run; >= 1 once Reset
	chunks uint64 // ceil(n / chunk); read-only during a run
	_      [pad.CacheLine - 32]byte
}

// NewLoop returns a loop over [0, n) in chunks of chunk iterations. Chunk 0
// picks ChunkSize(n, 1); pass ChunkSize(n, workers) instead when the worker
// count is known. Any n and chunk >= 0 work, up to MaxInt. It panics if n or
// chunk is negative.
func NewLoop(n, chunk int) *Loop {
	l := new(Loop)
	l.Reset(n, chunk)
	return l
}

// Reset makes l a fresh loop over [0, n) in chunks of chunk iterations
// (chunk 0 picks ChunkSize(n, 1)). It panics if n or chunk is negative. It
// must not run concurrently with Next.
func (l *Loop) Reset(n, chunk int) {
	if n < 0 {
		panic(fmt.Sprintf("ranges: Loop.Reset: negative length %d", n))
	}
	if chunk < 0 {
		panic(fmt.Sprintf("ranges: Loop.Reset: negative chunk %d", chunk))
	}
	if chunk == 0 {
		chunk = ChunkSize(n, 1)
	}
	l.n, l.chunk = uint64(n), uint64(chunk)
	l.chunks = ceilDiv(l.n, l.chunk)
	l.next.Store(0)
}

// Len returns n, the number of iterations of the loop.
func (l *Loop) Len() int { return int(l.n) }

// Chunk returns the chunk size (0 for a zero Loop, which has no chunks).
func (l *Loop) Chunk() int { return int(l.chunk) }

// NumChunks returns the number of chunks the loop is split into: the most
// copies that can get any work.
func (l *Loop) NumChunks() int { return int(l.chunks) }

// Next claims the next chunk and returns its bounds, lo < hi <= n, with ok
// true; once every chunk is claimed it returns ok false, however often it is
// called. Each iteration of [0, n) lies in exactly one chunk returned over all
// callers, for every n and chunk.
func (l *Loop) Next() (lo, hi int, ok bool) {
	// The Add is the claim: it returns distinct, increasing chunk indices
	// to concurrent callers. Chunk i < chunks starts at i*chunk <= n-1, and
	// n - start bounds its length, so nothing below can overflow.
	i := l.next.Add(1) - 1
	if i >= l.chunks {
		return 0, 0, false
	}
	start := i * l.chunk
	return int(start), int(start + min(l.chunk, l.n-start)), true
}

// Chunks returns an iterator over the chunks the caller claims, as (lo, hi)
// pairs, until the loop is drained.
func (l *Loop) Chunks() iter.Seq2[int, int] {
	return func(yield func(lo, hi int) bool) {
		for {
			lo, hi, ok := l.Next()
			if !ok || !yield(lo, hi) {
				return
			}
		}
	}
}

// Do calls body for every chunk the caller claims, until the loop is drained.
func (l *Loop) Do(body func(lo, hi int)) {
	for {
		lo, hi, ok := l.Next()
		if !ok {
			return
		}
		body(lo, hi)
	}
}

// Claimed returns how many iterations have been claimed so far (at most n).
func (l *Loop) Claimed() int {
	// min(next, chunks) * chunk < n + chunk <= 2^64 - 2: no overflow.
	return int(min(min(l.next.Load(), l.chunks)*l.chunk, l.n))
}

// Task is a tasks.Task whose copies drain a Loop, calling a body for each
// chunk they claim. Create one with NewTask; Reset its loop between runs.
type Task struct {
	Loop
	name string
	body func(worker, lo, hi int)
}

var _ tasks.Task = (*Task)(nil)

// NewTask returns a task named name that runs body over [0, n) in chunks of
// chunk iterations (0 picks ChunkSize(n, 1)). Run it with any number of
// copies; body receives the id of the copy that claimed the chunk. It panics
// if body is nil or n or chunk is negative.
func NewTask(name string, n, chunk int, body func(worker, lo, hi int)) *Task {
	if body == nil {
		panic(fmt.Sprintf("ranges: NewTask(%q): nil body", name))
	}
	t := &Task{name: name, body: body}
	t.Reset(n, chunk)
	return t
}

// Name returns the task's name.
func (t *Task) Name() string { return t.name }

// Work drains the loop on behalf of copy worker.
func (t *Task) Work(worker int) {
	for {
		lo, hi, ok := t.Next()
		if !ok {
			return
		}
		t.body(worker, lo, hi)
	}
}
