package workers

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
)

// A RangeOption tunes a loop; a later option overrides an earlier one of its
// kind (WithChunk and WithGuided are both the schedule). The zero one is invalid.
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

// WithChunk sets the schedule to chunks of n iterations, chunk k being
// [k*n, min((k+1)*n, len)), one per body call. The loop panics if n < 1.
func WithChunk(n int) RangeOption { return RangeOption{optChunk, n} }

// WithGuided makes chunks shrink as the loop drains, to max(minChunk,
// remaining/(2*copies)) (OpenMP's guided). The loop panics if minChunk < 1.
func WithGuided(minChunk int) RangeOption { return RangeOption{optGuided, minChunk} }

// WithCopies sets the number of copies (at most the chunks). The loop panics
// if n is outside [1, MaxWorkers].
func WithCopies(n int) RangeOption { return RangeOption{optCopies, n} }

// WithWorkersOnly keeps the body off the caller (for placed workers): the
// loop waits for the set like a plain run and pays a hand-off.
func WithWorkersOnly() RangeOption { return RangeOption{kind: optWorkersOnly} }

// ForRange calls body(worker, lo, hi) on chunks [lo, hi) covering [0, n)
// once each and returns when all calls have returned, synchronized as in
// RunN; worker is the claiming copy. Copies claim chunks one at a time, the
// caller's copy among them unless WithWorkersOnly. It runs ActiveWorkers
// copies (or WithCopies), at most GOMAXPROCS and the chunks; by default
// about eight chunks per copy (ranges.ChunkSize), one chunk [0, n) for one
// copy. A loop that plans one copy, or finds a set with concurrent runs
// busy, runs as one copy on its caller.
//
// A body call that panics ends that call only: its copy goes on claiming.
// One that calls runtime.Goexit ends its copy's goroutine (a worker is
// replaced), and the chunks it leaves run on the other copies, or after the
// run on the workers (or a stand-in for the caller). Once all chunks ran
// ForRange panics with a *PanicError for the first failure (a Goexit on the
// caller goes on instead, unless a call panicked). It allocates nothing once
// warm. It panics if n < 0, body is nil, an option is invalid or the set is closed.
func (w *Workers) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOption) {
	w.forRange("ForRange", n, body, nil, opts)
}

// Do calls fn(i) for each i in [0, n), the caller taking part: go with
// sync.WaitGroup on the set. At most ActiveWorkers calls (and GOMAXPROCS)
// run at once, so they must not wait for each other. Otherwise Do is
// ForRange with one i per chunk, a *PanicError naming the i.
func (w *Workers) Do(n int, fn func(i int)) { w.forRange("Do", n, nil, fn, doOptions) }

var doOptions = []RangeOption{WithChunk(1)} // one i per claim

// forRange runs ForRange (body) or Do (each) on a pooled task.
func (w *Workers) forRange(op string, n int, body func(worker, lo, hi int), each func(int), opts []RangeOption) {
	r := w.rangeSetup(op, n, body != nil || each != nil, opts)
	if n == 0 {
		return
	}
	t := rangePool.Get().(*rangeTask)
	t.body, t.each = body, each
	w.runLoop(context.Background(), op, t, &t.l, n, r)
	t.body, t.each = nil, nil // the pool keeps nothing of the call
	rangePool.Put(t)
}

// ForChunks is ForRange for bodies with state of their own (scratch memory):
// each call of body ranges over the chunks its copy claims, and must range
// until they run out, or ForChunks panics once the loop is done. body runs at
// most once per copy, and again after a call that panicked or called
// runtime.Goexit with chunks left. Options and panics are those of ForRange.
func (w *Workers) ForChunks(n int, body func(chunks iter.Seq2[int, int]), opts ...RangeOption) {
	r := w.rangeSetup("ForChunks", n, body != nil, opts)
	if n == 0 {
		return
	}
	t := &chunksTask{body: body}
	w.runLoop(context.Background(), "ForChunks", t, &t.l, n, r)
	if t.early.Load() {
		panic(fmt.Sprintf("workers: ForChunks on %q: a body returned before ranging over its chunks to the end: every call must range over its chunks until they run out", w.name))
	}
}

// rangeConfig is a loop's options applied; the schedule is chunk (dynamic),
// minChunk (guided) or, both 0, the default.
type rangeConfig struct {
	copies, chunk, minChunk int
	fixed                   bool // copies chosen: GOMAXPROCS does not cut them
	callerRuns              bool
}

// rangeSetup checks a loop's arguments and applies its options.
func (w *Workers) rangeSetup(op string, n int, haveBody bool, opts []RangeOption) (r rangeConfig) {
	w.check(op)
	if n < 0 || !haveBody {
		w.panicRangeArgs(op, n)
	}
	r.copies, r.callerRuns = w.ActiveWorkers(), true
	for i, o := range opts {
		switch o.kind {
		case optChunk, optGuided:
			if o.n < 1 {
				w.panicRangeOption(op, i, o)
			}
			r.chunk, r.minChunk = o.n, 0
			if o.kind == optGuided {
				r.chunk, r.minChunk = 0, o.n
			}
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
func (w *Workers) panicRangeArgs(op string, n int) {
	if n < 0 {
		panic(fmt.Sprintf("workers: %s on %q: negative length %d", op, w.name, n))
	}
	panic(fmt.Sprintf("workers: %s on %q: nil body", op, w.name))
}

//go:noinline
func (w *Workers) panicRangeOption(op string, i int, o RangeOption) {
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

// rangePool recycles rangeTasks, each put back after its loop, and so every
// copy, returned (a loop that panics puts nothing back).
var rangePool = sync.Pool{New: func() any { return new(rangeTask) }}

// rangeTask is the loop task of ForRange (body), Do (each), ForRangeContext
// (ctxBody) and RunContext (ctxEach); exactly one is set. ctx and cancel are
// written before the run, which publishes them; err is read after it.
type rangeTask struct {
	l       loop
	body    func(worker, lo, hi int)
	each    func(i int)
	ctxBody func(ctx context.Context, worker, lo, hi int) error
	ctxEach func(ctx context.Context, i int) error
	ctx     context.Context
	cancel  context.CancelCauseFunc
	// failed's CAS elects the first error's copy: it writes err, cancels ctx.
	failed atomic.Bool
	err    error
}

func (t *rangeTask) Name() string {
	switch {
	case t.body != nil:
		return "workers.ForRange"
	case t.each != nil:
		return "workers.Do"
	case t.ctxEach != nil:
		return "workers.RunContext"
	}
	return "workers.ForRangeContext"
}

func (t *rangeTask) CallerCanRun() bool { return t.l.callerRuns }

// callFailed cancels a context loop's context: a call panicked or exited.
func (t *rangeTask) callFailed() {
	if t.cancel != nil {
		t.cancel(errCopyPanicked)
	}
}

// Work drains the loop for copy c, a new pass after each body call's panic.
func (t *rangeTask) Work(c int) {
	id := c
	for !t.l.protect(t, &id, func() { t.pass(c, &id) }) {
	}
}

// pass claims and runs chunks until none is left or, for ForRangeContext,
// ctx is done or a call failed. each's and ctxEach's chunks hold one i: a
// failed call leaves nothing of its chunk behind.
func (t *rangeTask) pass(c int, id *int) {
	for {
		// Err synchronizes after the cancel that made ctx done.
		if t.ctxBody != nil && t.ctx.Err() != nil {
			return
		}
		lo, hi, ok := t.l.Next()
		if !ok {
			return
		}
		t.l.claimed(c)
		switch {
		case t.body != nil:
			t.body(c, lo, hi)
		case t.each != nil:
			*id = lo
			t.each(lo)
		case t.ctxEach != nil:
			*id = lo
			if err := t.ctxEach(t.ctx, lo); err != nil {
				t.fail(err)
			}
		default:
			if err := t.ctxBody(t.ctx, c, lo, hi); err != nil {
				t.fail(err)
				return
			}
		}
	}
}

func (t *rangeTask) fail(err error) {
	if t.failed.CompareAndSwap(false, true) {
		t.err = err
		t.cancel(err)
	}
}

// chunksTask is the loop task of ForChunks, not pooled: an iterator kept past
// its call must find its own drained loop, never a later call's.
type chunksTask struct {
	l     loop
	body  func(chunks iter.Seq2[int, int])
	early atomic.Bool // a body returned before its chunks ran out
}

func (t *chunksTask) Name() string       { return "workers.ForChunks" }
func (t *chunksTask) CallerCanRun() bool { return t.l.callerRuns }
func (t *chunksTask) callFailed()        {}

// Work calls the body while chunks are left: once, unless a call panics
// with chunks left (a Goexit ends the copy).
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
				t.l.claimed(c)
				if !yield(lo, hi) {
					return
				}
			}
		}
		id := c
		if !t.l.protect(t, &id, func() { t.body(chunks) }) {
			continue // it panicked: call it again for the chunks left
		}
		if !out {
			t.early.Store(true)
		}
		return
	}
}
