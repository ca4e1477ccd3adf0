package workers

import (
	"fmt"
	"sync"

	"github.com/workgang/workgang/tasks/ranges"
)

// A RangeOption tunes ForRange (and ForRangeContext), the way an Option
// tunes New. Without options ForRange picks the chunk size from n and the
// number of copies (ranges.ChunkSize), runs ActiveWorkers copies, and runs
// them all on workers.
//
// An option maps the configuration to a new one instead of writing through a
// pointer: a pointer handed to a function value escapes, and ForRange would
// then allocate its configuration on every call.
type RangeOption func(rangeConfig) rangeConfig

type rangeConfig struct {
	chunk      int // 0: ranges.ChunkSize(n, copies)
	chunkSet   bool
	copies     int // 0: ActiveWorkers
	copiesSet  bool
	callerRuns bool
}

// WithChunk sets the number of iterations a copy claims at a time. ForRange
// panics if n < 1.
func WithChunk(n int) RangeOption {
	return func(c rangeConfig) rangeConfig { c.chunk, c.chunkSet = n, true; return c }
}

// WithCopies sets the number of copies to run instead of ActiveWorkers.
// ForRange never runs more copies than there are chunks, and panics if n is
// outside [1, MaxWorkers].
func WithCopies(n int) RangeOption {
	return func(c rangeConfig) rangeConfig { c.copies, c.copiesSet = n, true; return c }
}

// WithCallerRuns lets the goroutine calling ForRange run copies itself (see
// tasks.CallerRuns); with a single copy, or a loop of one chunk, the loop then
// runs inline and no worker is woken.
func WithCallerRuns() RangeOption { return withCallerRuns }

func withCallerRuns(c rangeConfig) rangeConfig { c.callerRuns = true; return c }

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
// It panics if n is negative, body or an option is nil, an option is out of
// range, or in the cases where RunN panics (with RunN's message).
func (w *Workers) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOption) {
	// Only the exported API of Workers is used below: ForRange is what a
	// user would write with package ranges, plus a pool of tasks.
	copies, c := w.rangeSetup("ForRange", n, body != nil, opts)
	if n == 0 {
		return
	}
	t := rangePool.Get().(*rangeTask)
	t.loop.Reset(n, c.chunk)
	t.body = body
	t.callerRuns = c.callerRuns
	// No defer: a panicking run leaves t to the garbage collector instead of
	// returning a task whose loop a late reader might still see.
	w.RunN(t, min(copies, t.loop.NumChunks()))
	t.body = nil // do not keep the closure alive from the pool
	rangePool.Put(t)
}

// rangeSetup checks ForRange's arguments and applies its options; it returns
// the copy count and the configuration with the chunk size filled in.
func (w *Workers) rangeSetup(op string, n int, haveBody bool, opts []RangeOption) (int, rangeConfig) {
	if n < 0 {
		panic(fmt.Sprintf("workers: %s on %q: negative length %d", op, w.Name(), n))
	}
	if !haveBody {
		panic(fmt.Sprintf("workers: %s on %q: nil body", op, w.Name()))
	}
	var c rangeConfig
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("workers: %s on %q: option %d is nil", op, w.Name(), i))
		}
		c = o(c)
	}
	if c.chunkSet && c.chunk < 1 {
		panic(fmt.Sprintf("workers: %s on %q: WithChunk(%d): chunk < 1", op, w.Name(), c.chunk))
	}
	copies := w.ActiveWorkers()
	if c.copiesSet {
		copies = c.copies
		if copies < 1 || copies > w.MaxWorkers() {
			panic(fmt.Sprintf("workers: %s on %q: WithCopies(%d) out of range [1, %d]", op, w.Name(), copies, w.MaxWorkers()))
		}
	}
	if !c.chunkSet && n > 0 {
		c.chunk = ranges.ChunkSize(n, copies)
	}
	return copies, c
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
