package workers

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
)

// A RangeOption tunes a loop (ForRange, ForChunks, ForRangeContext); a later
// option overrides an earlier one of its kind (WithChunk and WithGuided are
// both the schedule). The zero RangeOption is invalid.
type RangeOption struct {
	kind rangeOptionKind
	n    int
}

type rangeOptionKind uint8

const (
	_ rangeOptionKind = iota // the zero RangeOption
	optChunk
	optCopies
	optWorkersOnly
	optGuided
)

// WithChunk sets the schedule to chunks of n iterations: chunk k is
// [k*n, min((k+1)*n, len)), and each body call gets exactly one chunk, never
// two merged and never part of one, whatever the copies, the set's state or
// the machine. The loop panics if n < 1.
func WithChunk(n int) RangeOption { return RangeOption{optChunk, n} }

// WithGuided makes the copies claim chunks that shrink as the loop drains,
// max(minChunk, remaining/(2*copies)) iterations each (OpenMP's guided
// schedule); every chunk but the one that ends the range has at least
// minChunk iterations, and chunks do not start at multiples of anything. The
// loop panics if minChunk < 1.
func WithGuided(minChunk int) RangeOption { return RangeOption{optGuided, minChunk} }

// WithCopies sets the number of copies (never more than the chunks). The loop
// panics if n is outside [1, MaxWorkers].
func WithCopies(n int) RangeOption { return RangeOption{optCopies, n} }

// WithWorkersOnly keeps the body off the caller (for placed workers): the
// loop waits for the set like a plain run and each loop pays a hand-off.
func WithWorkersOnly() RangeOption { return RangeOption{kind: optWorkersOnly} }

// ForRange runs body over [0, n) and returns when every iteration is done.
// body(worker, lo, hi) runs iterations lo..hi-1 for copy worker; copies claim
// chunks one at a time, so faster copies take more. The caller runs a copy
// too (not WithWorkersOnly).
//
// The copies: ActiveWorkers, at most GOMAXPROCS (as the loop starts) and the
// chunks; WithCopies sets them. The schedule: WithChunk or WithGuided; by
// default chunks of ranges.ChunkSize(n, copies) iterations (about eight per
// copy), and with one copy a single chunk [0, n), so body is called once.
// A loop runs on its caller alone, as one copy, when it plans one copy, or
// when it finds a set with concurrent runs busy (Stats counts both); it then
// takes its whole range as one chunk unless WithChunk or WithGuided is set.
//
// Every iteration runs once, whatever a body call does: a call that panics or
// calls runtime.Goexit ends that call only, and its copy goes on claiming.
// Then ForRange panics with a *PanicError naming the first (a Goexit on the
// caller proceeds instead, unless a call panicked). The memory model is that
// of RunN. ForRange allocates nothing once warm. It panics if n < 0, body is
// nil, an option is invalid or the set is closed.
func (w *Workers) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOption) {
	w.s("ForRange").ForRange(n, body, opts...)
}

// ForRange is Workers.ForRange on a set that is not nil.
func (w *set) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOption) {
	r := w.rangeSetup("ForRange", n, body != nil, opts)
	if n == 0 {
		return
	}
	t := rangePool.Get().(*rangeTask)
	t.body, t.name = body, "workers.ForRange"
	w.runLoop(context.Background(), "ForRange", t, &t.l, n, r)
	t.body = nil // keep the closure alive from nothing
	rangePool.Put(t)
}

// Do calls fn(i) for each i in [0, n) and returns when all have returned: go
// + sync.WaitGroup on the set, the caller taking part. At most ActiveWorkers
// calls (and GOMAXPROCS) run at once; they must not wait for each other.
// Every i runs once, whatever another call does; a *PanicError names the
// first failed call's i. Memory model and panics are otherwise those of
// ForRange. It panics if n < 0, fn is nil or the set is closed.
func (w *Workers) Do(n int, fn func(i int)) { w.s("Do").Do(n, fn) }

// Do is Workers.Do on a set that is not nil.
func (w *set) Do(n int, fn func(i int)) {
	r := w.rangeSetup("Do", n, fn != nil, doOptions)
	if n == 0 {
		return
	}
	t := rangePool.Get().(*rangeTask)
	t.each, t.name = fn, "workers.Do"
	w.runLoop(context.Background(), "Do", t, &t.l, n, r)
	t.each = nil
	rangePool.Put(t)
}

// doOptions is Do's schedule: one i per claim.
var doOptions = []RangeOption{WithChunk(1)}

// ForChunks is ForRange for bodies with state of their own: body is called
// with an iterator over the chunks its copy claims, so scratch memory is made
// once per call. It is called at most once per copy, by copies that find
// chunks left when they start, and once more after each call that panicked
// while chunks were left (so every chunk runs); the chunks follow the
// schedule as in ForRange. Each call must range over its chunks until they
// run out: ForChunks panics, once the loop is done, if one returned sooner.
// Copy ids are not safe keys for scratch data on a set with concurrent runs.
// Options and panics are those of ForRange.
func (w *Workers) ForChunks(n int, body func(chunks iter.Seq2[int, int]), opts ...RangeOption) {
	w.s("ForChunks").ForChunks(n, body, opts...)
}

// ForChunks is Workers.ForChunks on a set that is not nil.
func (w *set) ForChunks(n int, body func(chunks iter.Seq2[int, int]), opts ...RangeOption) {
	r := w.rangeSetup("ForChunks", n, body != nil, opts)
	if n == 0 {
		return
	}
	// Not pooled: an iterator kept past its call must find its own, drained
	// loop, never a later call's.
	t := &chunksTask{body: body}
	w.runLoop(context.Background(), "ForChunks", t, &t.l, n, r)
	if t.early.Load() {
		panic(fmt.Sprintf("workers: ForChunks on %q: a body returned before ranging over its chunks to the end: every call must range over its chunks until they run out", w.name))
	}
}

// rangeConfig is a loop's options applied: copies, the schedule (chunk for
// the dynamic one, or minChunk > 0 for the guided one; neither: the default)
// and caller-runs.
type rangeConfig struct {
	copies, chunk, minChunk int
	fixed                   bool // copies chosen (WithCopies, RunContext): GOMAXPROCS does not cut them
	callerRuns              bool
}

// rangeSetup checks a loop's arguments and applies its options. The panics
// are out of line to keep its frame small.
func (w *set) rangeSetup(op string, n int, haveBody bool, opts []RangeOption) (r rangeConfig) {
	w.check(op)
	if n < 0 || !haveBody {
		w.panicRangeArgs(op, n, haveBody)
	}
	r.copies, r.callerRuns = w.ActiveWorkers(), true
	for i, o := range opts {
		switch o.kind {
		case optChunk:
			if o.n < 1 {
				w.panicRangeOption(op, i, o)
			}
			r.chunk, r.minChunk = o.n, 0
		case optGuided:
			if o.n < 1 {
				w.panicRangeOption(op, i, o)
			}
			r.chunk, r.minChunk = 0, o.n
		case optCopies:
			if o.n < 1 || o.n > w.MaxWorkers() {
				w.panicRangeOption(op, i, o)
			}
			r.copies, r.fixed = o.n, true
		case optWorkersOnly:
			r.callerRuns = false
		default:
			w.panicRangeOption(op, i, o)
		}
	}
	return r
}

//go:noinline
func (w *set) panicRangeArgs(op string, n int, haveBody bool) {
	if n < 0 {
		panic(fmt.Sprintf("workers: %s on %q: negative length %d", op, w.name, n))
	}
	panic(fmt.Sprintf("workers: %s on %q: nil body", op, w.name))
}

//go:noinline
func (w *set) panicRangeOption(op string, i int, o RangeOption) {
	switch o.kind {
	case optChunk:
		panic(fmt.Sprintf("workers: %s on %q: WithChunk(%d): chunk < 1", op, w.name, o.n))
	case optGuided:
		panic(fmt.Sprintf("workers: %s on %q: WithGuided(%d): minChunk < 1", op, w.name, o.n))
	case optCopies:
		hint := ""
		if o.n > w.MaxWorkers() {
			hint = "; a loop needs no more copies than workers (a smaller WithChunk balances finer)"
		}
		panic(fmt.Sprintf("workers: %s on %q: WithCopies(%d) out of range [1, %d]%s", op, w.name, o.n, w.MaxWorkers(), hint))
	}
	panic(fmt.Sprintf("workers: %s on %q: option %d is the zero RangeOption", op, w.name, i))
}

// rangePool and rangeCtxPool recycle the tasks of ForRange and Do, and of
// RunContext and ForRangeContext, so that a call allocates no task. A task is
// put back only after its loop returned, that is after every copy of it has
// returned; a loop that panics puts nothing back (the Put is not deferred).
var (
	rangePool    = sync.Pool{New: func() any { return new(rangeTask) }}
	rangeCtxPool = sync.Pool{New: func() any { return new(rangeCtxTask) }}
)

// rangeTask is the loop task of ForRange (body) and Do (each).
type rangeTask struct {
	l    loop
	name string
	body func(worker, lo, hi int)
	each func(i int)
}

func (t *rangeTask) Name() string       { return t.name }
func (t *rangeTask) CallerCanRun() bool { return t.l.callerRuns }
func (t *rangeTask) callFailed()        {}

// Work drains the loop for copy c in passes: a pass ends when the chunks run
// out (protect returns true) or a body call panics, and then the next pass
// goes on claiming.
func (t *rangeTask) Work(c int) {
	id := c
	for !t.l.protect(t, c, &id, func() { t.pass(c, &id) }) {
	}
}

// pass claims and runs chunks until none is left. Do's chunks hold one i
// each (doOptions), so a call that fails leaves nothing of its chunk behind.
func (t *rangeTask) pass(c int, id *int) {
	for {
		lo, hi, ok := t.l.Next()
		if !ok {
			return
		}
		if t.each != nil {
			*id = lo
			t.each(lo)
			continue
		}
		t.body(c, lo, hi)
	}
}

// chunksTask is the loop task of ForChunks.
type chunksTask struct {
	l     loop
	body  func(chunks iter.Seq2[int, int])
	early atomic.Bool // a body returned before its chunks ran out
}

func (t *chunksTask) Name() string       { return "workers.ForChunks" }
func (t *chunksTask) CallerCanRun() bool { return t.l.callerRuns }
func (t *chunksTask) callFailed()        {}

// Work calls the body while chunks are left: once, unless a call panics (or
// calls Goexit) with chunks left. Each call has an iterator of its own: its
// claims, and whether they ran out, are that call's. A call that returns
// before they run out ends the copy; the loop reports it once done.
func (t *chunksTask) Work(c int) {
	for !t.l.Drained() {
		out := false
		chunks := func(yield func(lo, hi int) bool) {
			for {
				lo, hi, ok := t.l.Next()
				if !ok {
					out = true
					return
				}
				if !yield(lo, hi) {
					return
				}
			}
		}
		id := c
		if !t.l.protect(t, c, &id, func() { t.body(chunks) }) {
			continue // it panicked: call it again for the chunks left
		}
		if !out {
			t.early.Store(true)
		}
		return
	}
}
