// Package ranges splits a loop over [0, n) into chunks that the copies of a
// task claim atomically, so that a fast copy takes more chunks than a slow
// one (dynamic scheduling in OpenMP's terms, the self-scheduling loop of
// Go's old runtime parfor). Package workers' ForRange runs such a loop on a
// worker set in one call; this package is for runtimes that run their loops
// as tasks of their own (Task), or on other runners.
//
// A Loop is the shared state of one loop: n, the schedule and the claim
// counter. Every copy drains it:
//
//	for {
//		lo, hi, ok := loop.Next()
//		if !ok {
//			break
//		}
//		body(lo, hi)
//	}
//
// Reset gives a Loop chunks of a fixed size: a claim is one atomic add, so the
// chunk size trades balance (small chunks) against contention on that word
// (large chunks); ChunkSize picks a default from n and the worker count.
// ResetGuided gives it chunks that shrink as it drains (OpenMP's guided
// schedule): each claim takes max(minChunk, remaining/(2*copies)) iterations
// with one compare-and-swap, so a loop costs few claims and the small chunks
// at its end even out copies that started late. A Loop and its Task are
// allocation-free once made.
//
// The package imports only the standard library and the module's internal
// padding unit and schedule engine (which tasks/team's loops use too).
package ranges

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/workgang/workgang/internal/loop"
	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/tasks"
)

// chunksPerWorker is the number of chunks per worker ChunkSize aims for:
// enough that a copy which starts late or runs slow is made up for by the
// others (with one chunk per worker the slowest copy sets the pace), few
// enough that the claims cost nothing next to any real loop body. Not fewer,
// and not a guided default (large claims first): either leaves the heavy
// iterations of a loop whose work sits at its start to one copy
// (BenchmarkForRangeSkew in package workers, its front rows). A body with
// setup of its own pays for that once per chunk; ForChunks makes it once
// per copy.
const chunksPerWorker = 8

// ChunkSize returns the default chunk size for a loop of n iterations run by
// the given number of workers: ceil(n / (8 * workers)), at least 1, so that
// every worker gets about eight chunks: enough that a copy which starts late
// or runs slow is made up for by the others, few enough that the claims cost
// nothing next to any real loop body. The arithmetic cannot overflow. It
// panics if n is negative or workers < 1.
func ChunkSize(n, workers int) int {
	if n < 0 {
		panic(fmt.Sprintf("ranges: ChunkSize: negative length %d", n))
	}
	if workers < 1 {
		panic(fmt.Sprintf("ranges: ChunkSize: workers = %d, want >= 1", workers))
	}
	per := math.MaxInt // a product past MaxInt counts as MaxInt
	if workers <= math.MaxInt/chunksPerWorker {
		per = workers * chunksPerWorker
	}
	return max(1, loop.CeilDiv(n, per))
}

// Loop is a loop over [0, n) handed out in chunks. The zero value is an empty
// loop; Reset or ResetGuided gives it a length and a schedule. Next is safe
// for concurrent use; the Resets are not (call them between runs, see
// package claim for why a claim must belong to one run). A Loop must not be
// copied after first use.
//
// Memory model: claiming orders nothing; the iterations' writes are published
// to the caller by whatever runs the copies (package workers' Run).
type Loop struct {
	// next is the claim counter. The schedule shares its line on purpose:
	// every claim reads it and writes next, so one line moves per claim.
	// The pads keep the neighbours of an enclosing struct off it.
	_    pad.Line
	next atomic.Uint64
	s    loop.Schedule // read-only during a run
	_    [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Uint64{}) - unsafe.Sizeof(loop.Schedule{})]byte
}

// Reset makes l a fresh loop over [0, n) in chunks of chunk iterations
// (chunk 0 picks ChunkSize(n, 1); pass ChunkSize(n, workers) when the worker
// count is known). Any n and chunk up to MaxInt work. It panics if n or
// chunk is negative. It must not run concurrently with Next.
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
	l.s = loop.Dynamic(n, chunk)
	l.next.Store(0)
}

// ResetGuided makes l a fresh loop over [0, n) whose chunks shrink as it
// drains: each claim takes max(minChunk, remaining/(2*copies)) iterations
// (fewer only at the end). Early claims are large, so a loop of even
// iterations costs few claims; late claims are small, so copies that start
// late or run slow are made up for at the end. It panics if n is negative,
// minChunk < 1 or copies < 1. It must not run concurrently with Next.
func (l *Loop) ResetGuided(n, minChunk, copies int) {
	switch {
	case n < 0:
		panic(fmt.Sprintf("ranges: Loop.ResetGuided: negative length %d", n))
	case minChunk < 1:
		panic(fmt.Sprintf("ranges: Loop.ResetGuided: minChunk = %d, want >= 1", minChunk))
	case copies < 1:
		panic(fmt.Sprintf("ranges: Loop.ResetGuided: copies = %d, want >= 1", copies))
	}
	l.s = loop.Guided(n, minChunk, copies)
	l.next.Store(0)
}

// NumChunks returns the number of chunks the loop is split into, the most
// copies that can get any work: ceil(n / chunk), or, for a guided loop, the
// bound ceil(n / minChunk).
func (l *Loop) NumChunks() int { return l.s.Chunks() }

// Next claims the next chunk and returns its bounds, lo < hi <= n, with ok
// true; once every iteration is claimed it returns ok false, however often it
// is called. Each iteration of [0, n) lies in exactly one chunk returned over
// all callers, for every n and schedule.
func (l *Loop) Next() (lo, hi int, ok bool) { return l.s.Next(&l.next) }

// Claimed returns how many iterations have been claimed so far (at most n).
func (l *Loop) Claimed() int { return l.s.Claimed(l.next.Load()) }

// Task is a tasks.Task whose copies drain a Loop, calling a body for each
// chunk they claim. Create one with NewTask; reset its Loop between runs.
type Task struct {
	loop Loop
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
	t.loop.Reset(n, chunk)
	return t
}

// Loop returns the task's loop, to Reset between runs.
func (t *Task) Loop() *Loop { return &t.loop }

// Name returns the task's name.
func (t *Task) Name() string { return t.name }

// Work drains the loop on behalf of copy worker.
func (t *Task) Work(worker int) {
	for {
		lo, hi, ok := t.loop.Next()
		if !ok {
			return
		}
		t.body(worker, lo, hi)
	}
}
