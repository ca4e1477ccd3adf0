package workers

import (
	"fmt"
	"sync"

	"github.com/workgang/workgang/tasks/ranges"
)

// A RangeOption tunes ForRange (and ForRangeContext), the way an Option
// tunes New: create one with WithChunk, WithCopies or WithCallerRuns and pass
// any number; a later option overrides an earlier one of the same kind.
// Without options ForRange picks the chunk size from n and the number of
// copies (ranges.ChunkSize), runs ActiveWorkers copies, and runs them all on
// workers. The zero RangeOption is invalid.
//
// Unlike Option, a RangeOption is a small value rather than a function:
// applying it is a switch instead of an indirect call, which kept ForRange of
// a short inline loop measurably faster (BenchmarkForRange,
// n=1/workers+caller), and no configuration escapes, so options allocate
// nothing.
type RangeOption struct {
	kind rangeOptionKind
	n    int
}

type rangeOptionKind uint8

const (
	_ rangeOptionKind = iota // the zero RangeOption
	optChunk
	optCopies
	optCallerRuns
)

// WithChunk sets the number of iterations a copy claims at a time. ForRange
// panics if n < 1.
func WithChunk(n int) RangeOption { return RangeOption{optChunk, n} }

// WithCopies sets the number of copies to run instead of ActiveWorkers.
// ForRange never runs more copies than there are chunks, and panics if n is
// outside [1, MaxWorkers].
func WithCopies(n int) RangeOption { return RangeOption{optCopies, n} }

// WithCallerRuns lets the goroutine calling ForRange run copies itself (see
// tasks.CallerRuns); with a single copy, or a loop of one chunk, the loop then
// runs inline and no worker is woken.
func WithCallerRuns() RangeOption { return RangeOption{kind: optCallerRuns} }

// ForRange runs body over the iterations [0, n) on the set and returns when
// all of them are done. The loop is split into chunks that the copies claim
// one at a time (see package ranges), so faster copies take more chunks;
// body(worker, lo, hi) runs iterations lo..hi-1 on behalf of copy worker, each
// chunk exactly once. Copies never outnumber chunks, so worker is below
// min(copies, number of chunks). n == 0 runs nothing. Any n and chunk size up
// to MaxInt work.
//
// The memory model and the handling of panics are those of RunN: every body
// call's writes are visible to the caller when ForRange returns. ForRange
// itself does not allocate once a few calls have warmed its pool, options
// included (body's closure, if it captures variables, may).
//
// It panics if n is negative, body is nil, an option is out of range or the
// zero RangeOption, or in the cases where RunN panics (with RunN's message).
func (w *Workers) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOption) {
	// Only the exported API of Workers is used below: ForRange is what a
	// user would write with package ranges, plus a pool of tasks.
	copies, chunk, callerRuns := w.rangeSetup("ForRange", n, body != nil, opts)
	if n == 0 {
		return
	}
	t := rangePool.Get().(*rangeTask)
	t.loop.Reset(n, chunk)
	t.body = body
	t.callerRuns = callerRuns
	// No defer: a panicking run leaves t to the garbage collector instead of
	// returning a task whose loop a late reader might still see.
	w.RunN(t, min(copies, t.loop.NumChunks()))
	t.body = nil // do not keep the closure alive from the pool
	rangePool.Put(t)
}

// rangeSetup checks ForRange's arguments and applies its options; it returns
// the copy count, the chunk size (filled in for n > 0) and whether the caller
// runs copies. The panics are out of line to keep its frame small.
func (w *Workers) rangeSetup(op string, n int, haveBody bool, opts []RangeOption) (copies, chunk int, callerRuns bool) {
	if n < 0 || !haveBody {
		w.panicRangeArgs(op, n, haveBody)
	}
	copies = w.ActiveWorkers()
	for i, o := range opts {
		switch o.kind {
		case optChunk:
			if o.n < 1 {
				w.panicRangeOption(op, i, o)
			}
			chunk = o.n
		case optCopies:
			if o.n < 1 || o.n > w.MaxWorkers() {
				w.panicRangeOption(op, i, o)
			}
			copies = o.n
		case optCallerRuns:
			callerRuns = true
		default:
			w.panicRangeOption(op, i, o)
		}
	}
	if chunk == 0 && n > 0 {
		chunk = ranges.ChunkSize(n, copies)
	}
	return copies, chunk, callerRuns
}

//go:noinline
func (w *Workers) panicRangeArgs(op string, n int, haveBody bool) {
	if n < 0 {
		panic(fmt.Sprintf("workers: %s on %q: negative length %d", op, w.Name(), n))
	}
	panic(fmt.Sprintf("workers: %s on %q: nil body", op, w.Name()))
}

//go:noinline
func (w *Workers) panicRangeOption(op string, i int, o RangeOption) {
	switch o.kind {
	case optChunk:
		panic(fmt.Sprintf("workers: %s on %q: WithChunk(%d): chunk < 1", op, w.Name(), o.n))
	case optCopies:
		panic(fmt.Sprintf("workers: %s on %q: WithCopies(%d) out of range [1, %d]", op, w.Name(), o.n, w.MaxWorkers()))
	}
	panic(fmt.Sprintf("workers: %s on %q: option %d is the zero RangeOption", op, w.Name(), i))
}

// rangePool recycles ForRange's tasks so that a call allocates nothing. A task
// is put back only after RunN returned, that is after every copy of the run
// has returned, so no copy of an old run can touch a recycled task.
var rangePool = sync.Pool{New: func() any { return new(rangeTask) }}

// rangeTask is the task ForRange runs: copies drain loop.
type rangeTask struct {
	loop       ranges.Loop
	body       func(worker, lo, hi int)
	callerRuns bool
}

func (t *rangeTask) Name() string       { return "workers.ForRange" }
func (t *rangeTask) CallerCanRun() bool { return t.callerRuns }

func (t *rangeTask) Work(worker int) {
	for {
		lo, hi, ok := t.loop.Next()
		if !ok {
			return
		}
		t.body(worker, lo, hi)
	}
}
