package workers

import (
	"fmt"
	"sync"

	"github.com/workgang/workgang/tasks/ranges"
)

// RangeOptions tunes ForRange. The zero value picks the chunk size from n and
// the number of copies (ranges.ChunkSize), runs ActiveWorkers copies, and runs
// them all on workers.
type RangeOptions struct {
	// Chunk is the number of iterations a copy claims at a time; 0 picks
	// ranges.ChunkSize(n, copies).
	Chunk int
	// Workers is the number of copies to run, at most MaxWorkers; 0 means
	// ActiveWorkers. ForRange never runs more copies than there are chunks.
	Workers int
	// CallerRuns lets the goroutine calling ForRange run copies itself (see
	// tasks.CallerRuns); with a single copy, or a loop of one chunk, the loop
	// then runs inline and no worker is woken.
	CallerRuns bool
}

// ForRange runs body over the iterations [0, n) on the set and returns when
// all of them are done. The loop is split into chunks that the copies claim
// one at a time (see package ranges), so faster copies take more chunks;
// body(worker, lo, hi) runs iterations lo..hi-1 on behalf of copy worker, each
// chunk exactly once. Copies never outnumber chunks, so worker is below
// min(copies, number of chunks). n == 0 runs nothing.
//
// At most one RangeOptions may be given. The memory model and the handling of
// panics are those of RunN: every body call's writes are visible to the
// caller when ForRange returns. ForRange itself does not allocate once a few
// calls have warmed its pool (body's closure, if it captures variables, may).
//
// It panics if n is negative, body is nil, more than one RangeOptions is
// given, an option is out of range, or in the cases where RunN panics (with
// RunN's message).
func (w *Workers) ForRange(n int, body func(worker, lo, hi int), opts ...RangeOptions) {
	// Only the exported API of Workers is used below: ForRange is what a
	// user would write with package ranges, plus a pool of tasks.
	var o RangeOptions
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		panic(fmt.Sprintf("workers: ForRange on %q: %d RangeOptions given, want at most 1", w.Name(), len(opts)))
	}
	if n < 0 {
		panic(fmt.Sprintf("workers: ForRange on %q: negative length %d", w.Name(), n))
	}
	if body == nil {
		panic(fmt.Sprintf("workers: ForRange on %q: nil body", w.Name()))
	}
	if o.Chunk < 0 {
		panic(fmt.Sprintf("workers: ForRange on %q: negative chunk %d", w.Name(), o.Chunk))
	}
	copies := o.Workers
	if copies == 0 {
		copies = w.ActiveWorkers()
	}
	if copies < 1 || copies > w.MaxWorkers() {
		panic(fmt.Sprintf("workers: ForRange on %q: Workers = %d out of range [1, %d]", w.Name(), copies, w.MaxWorkers()))
	}
	if n == 0 {
		return
	}
	chunk := o.Chunk
	if chunk == 0 {
		chunk = ranges.ChunkSize(n, copies)
	}
	t := rangePool.Get().(*rangeTask)
	t.loop.Reset(n, chunk)
	t.body = body
	t.callerRuns = o.CallerRuns
	// No defer: a panicking run leaves t to the garbage collector instead of
	// returning a task whose loop a late reader might still see.
	w.RunN(t, min(copies, t.loop.NumChunks()))
	t.body = nil // do not keep the closure alive from the pool
	rangePool.Put(t)
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
