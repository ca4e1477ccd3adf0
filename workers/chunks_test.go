package workers_test

import (
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/workgang/workgang/workers"
)

// What the documentation promises about the chunks a loop hands its body,
// checked call by call: WithChunk(c) gives parts [k*c, min(k*c+c, n)), never
// merged and never split (README, "Choosing"; ExampleWorkers_ForRange_parts);
// the default schedule gives chunks of one length, and a loop of one copy a
// single chunk, [0, n); WithGuided(min) gives chunks of at least min but the
// last; every index runs once. The rules hold whatever the copies, and
// whether the loop runs on the workers, on its caller because the set is
// busy, or partly on each because the set frees while it runs.

// chunkSchedule is a loop schedule under test: WithChunk(chunk) if chunk >
// 0, WithGuided(guided) if guided > 0, else the default schedule.
type chunkSchedule struct {
	name          string
	chunk, guided int
}

func (s chunkSchedule) options() []workers.RangeOption {
	switch {
	case s.chunk > 0:
		return []workers.RangeOption{workers.WithChunk(s.chunk)}
	case s.guided > 0:
		return []workers.RangeOption{workers.WithGuided(s.guided)}
	}
	return nil
}

var (
	chunkSchedules = []chunkSchedule{
		{name: "default"},
		{name: "WithChunk(1)", chunk: 1},
		{name: "WithChunk(3)", chunk: 3},       // divides no n > 0 of chunkLengths
		{name: "WithChunk(64)", chunk: 64},     // divides n = 64 only
		{name: "WithChunk(5000)", chunk: 5000}, // more than every n
		{name: "WithGuided(1)", guided: 1},
		{name: "WithGuided(5)", guided: 5},
		{name: "WithGuided(100)", guided: 100},
	}
	chunkCopies = []struct {
		name   string
		opts   []workers.RangeOption
		copies int // 0: the default
	}{
		{"default copies", nil, 0},
		{"WithCopies(1)", []workers.RangeOption{workers.WithCopies(1)}, 1},
		{"WithCopies(2)", []workers.RangeOption{workers.WithCopies(2)}, 2},
	}
	chunkLengths = []int{0, 1, 7, 64, 1000, 4097}
)

// chunkSet is a set in the state a loop under test finds it in.
type chunkSet struct {
	name string
	// start makes the set; before is called before each loop and returns
	// the function the loop's body calls at each chunk; after follows the
	// loop; end releases what start held, then closes the set (copies: some
	// loops had more than one copy, so some found the set busy).
	start  func() *workers.Workers
	before func(w *workers.Workers) (onChunk func())
	after  func()
	end    func(t *testing.T, w *workers.Workers, copies bool)
}

// chunkSets: a set from New, free for every loop; a set with concurrent runs
// that another goroutine's RunN holds for the whole test, so that every
// loop of more than one copy finds it busy and runs on its caller; and the
// same set held again before each loop and freed by the loop's first chunk,
// so that the loop that found it busy runs on as one copy while it is free.
func chunkSets() []chunkSet {
	noop := func() {}
	var held, freed func() // release the current hold on each busy set
	return []chunkSet{
		{
			name:   "New",
			start:  func() *workers.Workers { return workers.New("chunks", 2) },
			before: func(*workers.Workers) func() { return noop },
			after:  noop,
			end:    func(_ *testing.T, w *workers.Workers, _ bool) { w.Close() },
		},
		{
			name: "busy",
			start: func() *workers.Workers {
				w := workers.New("chunks-busy", 2, workers.WithConcurrentRuns())
				held = holdSet(w, 2) // a RunN that runs until the end
				return w
			},
			before: func(*workers.Workers) func() { return noop },
			after:  noop,
			end:    endHeld(&held),
		},
		{
			name: "busy, then free",
			start: func() *workers.Workers {
				return workers.New("chunks-freed", 2, workers.WithConcurrentRuns())
			},
			before: func(w *workers.Workers) func() {
				freed = holdSet(w, 2)
				return freed // once: later calls return at once
			},
			after: func() { freed() }, // for a loop without chunks
			end:   endHeld(&freed),
		},
	}
}

// endHeld releases the last hold on a busy set, checks that loops of more
// than one copy did find it busy (or the test would not test what it says;
// a loop of one copy runs inline, busy or not), and closes it.
func endHeld(release *func()) func(t *testing.T, w *workers.Workers, copies bool) {
	return func(t *testing.T, w *workers.Workers, copies bool) {
		(*release)()
		if got := w.Stats().BusyRuns; copies && got == 0 {
			t.Errorf("loops that found the set busy: got %d; want > 0", got)
		}
		w.Close()
	}
}

// chunkLog records a loop's body calls as [lo, hi) pairs.
type chunkLog struct {
	mu    sync.Mutex
	calls [][2]int
}

func (l *chunkLog) add(lo, hi int) {
	l.mu.Lock()
	l.calls = append(l.calls, [2]int{lo, hi})
	l.mu.Unlock()
}

// sorted returns the calls sorted by lo (claim order is not promised).
func (l *chunkLog) sorted() [][2]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := slices.Clone(l.calls)
	slices.SortFunc(s, func(a, b [2]int) int { return a[0] - b[0] })
	return s
}

// chunkLoops are the loops whose chunks the test records: ForRange's body
// calls, and the chunks ForChunks's iterators yield.
var chunkLoops = []struct {
	name string
	loop func(w *workers.Workers, n int, onChunk func(lo, hi int), opts []workers.RangeOption)
}{
	{"ForRange", func(w *workers.Workers, n int, onChunk func(lo, hi int), opts []workers.RangeOption) {
		w.ForRange(n, func(_, lo, hi int) { onChunk(lo, hi) }, opts...)
	}},
	{"ForChunks", func(w *workers.Workers, n int, onChunk func(lo, hi int), opts []workers.RangeOption) {
		w.ForChunks(n, func(chunks iter.Seq2[int, int]) {
			for lo, hi := range chunks {
				onChunk(lo, hi)
			}
		}, opts...)
	}},
}

func TestChunkBoundaries(t *testing.T) {
	for _, loop := range chunkLoops {
		t.Run(loop.name, func(t *testing.T) {
			for _, set := range chunkSets() {
				t.Run(set.name, func(t *testing.T) {
					w := set.start()
					defer set.end(t, w, true) // WithCopies(2)
					for _, sched := range chunkSchedules {
						for _, cp := range chunkCopies {
							for _, n := range chunkLengths {
								t.Run(fmt.Sprintf("%s/%s/n=%d", sched.name, cp.name, n), func(t *testing.T) {
									var log chunkLog
									onChunk := set.before(w)
									loop.loop(w, n, func(lo, hi int) {
										onChunk()
										log.add(lo, hi)
									}, append(sched.options(), cp.opts...))
									set.after()
									checkChunks(t, n, sched, cp.copies, log.sorted())
								})
							}
						}
					}
				})
			}
		})
	}
}

// checkChunks checks a loop's calls, sorted by lo, against the rules of its
// schedule, each rule in a subtest named after it.
func checkChunks(t *testing.T, n int, sched chunkSchedule, copies int, calls [][2]int) {
	t.Run("each index once", func(t *testing.T) { checkEachIndexOnce(t, n, calls) })
	switch {
	case sched.chunk > 0:
		c := sched.chunk
		t.Run("each chunk is [k*c, min(k*c+c, n))", func(t *testing.T) {
			for _, ch := range calls {
				lo, hi := ch[0], ch[1]
				if lo%c != 0 {
					t.Errorf("chunk [%d, %d): got lo %% %d = %d; want 0 (never split)", lo, hi, c, lo%c)
				}
				if want := min(c, n-lo); hi-lo != want {
					t.Errorf("chunk [%d, %d): got length %d; want min(%d, n-lo) = %d (never merged, never split)", lo, hi, hi-lo, c, want)
				}
			}
		})
	case sched.guided > 0:
		m := sched.guided
		t.Run("sorted chunks tile [0, n), each of at least min but the one ending at n", func(t *testing.T) {
			checkTiles(t, n, calls)
			for _, ch := range calls {
				if lo, hi := ch[0], ch[1]; hi != n && hi-lo < m {
					t.Errorf("chunk [%d, %d): got length %d; want >= %d", lo, hi, hi-lo, m)
				}
			}
		})
	default:
		t.Run("chunks but the last share a length L and start at multiples of L", func(t *testing.T) {
			checkTiles(t, n, calls)
			if len(calls) == 0 {
				return
			}
			l := calls[0][1] - calls[0][0]
			for k, ch := range calls {
				if lo, hi := ch[0], ch[1]; lo != k*l {
					t.Errorf("chunk %d [%d, %d): got lo %d; want %d*L = %d (L = %d)", k, lo, hi, lo, k, k*l, l)
				} else if k < len(calls)-1 && hi-lo != l {
					t.Errorf("chunk %d [%d, %d): got length %d; want L = %d", k, lo, hi, hi-lo, l)
				}
			}
		})
		if copies == 1 && n > 0 {
			t.Run("one copy, one chunk [0, n)", func(t *testing.T) {
				if want := [][2]int{{0, n}}; !slices.Equal(calls, want) {
					t.Errorf("chunks: got %v; want %v", calls, want)
				}
			})
		}
	}
}

// checkEachIndexOnce checks that the chunks are within [0, n), none empty,
// and that together they cover every index of [0, n) exactly once.
func checkEachIndexOnce(t *testing.T, n int, calls [][2]int) {
	t.Helper()
	hits := make([]int, n)
	for _, ch := range calls {
		lo, hi := ch[0], ch[1]
		if lo < 0 || lo >= hi || hi > n {
			t.Errorf("chunk [%d, %d): got lo %d, hi %d; want 0 <= lo < hi <= n = %d", lo, hi, lo, hi, n)
			continue
		}
		for i := lo; i < hi; i++ {
			hits[i]++
		}
	}
	var wrong []int
	for i, h := range hits {
		if h != 1 {
			wrong = append(wrong, i)
		}
	}
	if len(wrong) > 0 {
		i := wrong[0]
		t.Errorf("%d of %d indices not run exactly once; index %d: got %d runs; want 1", len(wrong), n, i, hits[i])
	}
}

// checkTiles checks that the chunks, sorted by lo, follow each other from 0
// to n without gap or overlap.
func checkTiles(t *testing.T, n int, calls [][2]int) {
	t.Helper()
	next := 0
	for _, ch := range calls {
		if ch[0] != next {
			t.Errorf("chunk [%d, %d): got lo %d; want %d, the previous chunk's hi", ch[0], ch[1], ch[0], next)
		}
		next = ch[1]
	}
	if next != n {
		t.Errorf("last chunk's hi: got %d; want n = %d", next, n)
	}
}

// Do calls fn(i) once for each i, on each kind of set.
func TestChunkBoundariesDo(t *testing.T) {
	for _, set := range chunkSets() {
		t.Run(set.name, func(t *testing.T) {
			w := set.start()
			defer set.end(t, w, runtime.GOMAXPROCS(0) > 1) // Do's copies: at most GOMAXPROCS
			for _, n := range chunkLengths {
				t.Run(fmt.Sprintf("n=%d/each index once", n), func(t *testing.T) {
					var log chunkLog
					onChunk := set.before(w)
					w.Do(n, func(i int) {
						onChunk()
						log.add(i, i+1)
					})
					set.after()
					checkEachIndexOnce(t, n, log.sorted())
				})
			}
		})
	}
}
