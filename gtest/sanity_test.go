package gtest

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/race"
	"github.com/workgang/workgang/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sanityTask is the gtest's task: each copy claims bit 1<<id with a CAS,
// counts itself, records whether it ran on the caller, and then waits at a
// barrier until all n copies of the run have arrived. Because no copy can
// finish before all n have started, the n copies run on n distinct goroutines
// at the same time; a dispatcher that handed two ids to one goroutine, or
// never started a copy, would hang here (and the test binary's timeout
// reports it).
type sanityTask struct {
	n        int
	caller   bool
	callerG  uint64
	bitmap   atomic.Uint64
	count    atomic.Int32
	onCaller atomic.Int32
	arrived  atomic.Int32
	dupID    atomic.Int32 // first id seen twice, plus one
}

func (s *sanityTask) Name() string       { return "sanity" }
func (s *sanityTask) CallerCanRun() bool { return s.caller }

func (s *sanityTask) Work(id int) {
	bit := uint64(1) << id
	for {
		old := s.bitmap.Load()
		if old&bit != 0 {
			s.dupID.CompareAndSwap(0, int32(id)+1)
			break
		}
		if s.bitmap.CompareAndSwap(old, old|bit) {
			break
		}
	}
	s.count.Add(1)
	if goid.Get() == s.callerG {
		s.onCaller.Add(1)
	}
	s.arrived.Add(1)
	for s.arrived.Load() < int32(s.n) {
		runtime.Gosched()
	}
}

func (s *sanityTask) reset(n int, callerG uint64) {
	s.n, s.callerG = n, callerG
	s.bitmap.Store(0)
	s.count.Store(0)
	s.onCaller.Store(0)
	s.arrived.Store(0)
	s.dupID.Store(0)
}

// runSanity runs tries runs of n copies on w and checks every run.
func runSanity(t *testing.T, w *workers.Workers, n, tries int, caller bool) {
	t.Helper()
	me := goid.Get()
	s := &sanityTask{caller: caller}
	want := uint64(1)<<n - 1
	if n == 64 {
		want = ^uint64(0)
	}
	callerRuns := 0
	for try := range tries {
		s.reset(n, me)
		w.RunN(s, n)
		if d := s.dupID.Load(); d != 0 {
			t.Fatalf("try %d: id %d ran twice", try, d-1)
		}
		if got := s.bitmap.Load(); got != want {
			t.Fatalf("try %d: ids seen %b; want %b (missing %d)", try, got, want, bits.OnesCount64(want&^got))
		}
		if got := s.count.Load(); got != int32(n) {
			t.Fatalf("try %d: %d copies ran; want %d", try, got, n)
		}
		c := int(s.onCaller.Load())
		if !caller && c != 0 {
			t.Fatalf("try %d: %d copies ran on the caller of a task that did not opt in", try, c)
		}
		if caller && c != 1 {
			// With the barrier, the caller's first copy waits for all the
			// others, so it can run exactly one.
			t.Fatalf("try %d: %d copies ran on the caller; want exactly 1", try, c)
		}
		callerRuns += c
	}
	t.Logf("n=%d caller=%v: %d tries, %d copies on the caller", n, caller, tries, callerRuns)
}

func tries(t *testing.T) int {
	switch {
	case testing.Short():
		return 200
	case race.Enabled:
		return 1000
	default:
		return 5000
	}
}

// TestSanity is the WorkerThreads gtest: n in {1, max/2, max}, caller-runs
// off and on, for a set that fits GOMAXPROCS and for ones that outnumber it.
func TestSanity(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, max := range []int{procs, 8, 4 * procs} {
		if max > 64 {
			max = 64
		}
		for _, n := range distinct(1, max/2, max) {
			for _, caller := range []bool{false, true} {
				t.Run(fmt.Sprintf("max=%d/n=%d/caller=%v", max, n, caller), func(t *testing.T) {
					w := workers.New("gtest", max)
					defer w.Close()
					runSanity(t, w, n, tries(t), caller)
					require.LessOrEqual(t, w.CreatedWorkers(), max)
				})
			}
		}
	}
}

// TestSanityGOMAXPROCS1: with one P every hand-off must go through yields
// and parking; nothing may stall.
func TestSanityGOMAXPROCS1(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, spin := range []bool{false, true} {
		for _, caller := range []bool{false, true} {
			t.Run(fmt.Sprintf("spinOption=%v/caller=%v", spin, caller), func(t *testing.T) {
				var opts []workers.Option
				if spin {
					// An explicit spin budget despite GOMAXPROCS=1: spinners
					// must still yield to the goroutines they wait for.
					opts = append(opts, workers.WithSpin(20*time.Microsecond))
				}
				w := workers.New("gtest-1p", 4, opts...)
				defer w.Close()
				for _, n := range []int{1, 2, 4} {
					runSanity(t, w, n, tries(t)/5, caller)
				}
			})
		}
	}
}

// TestSanitySharedSet mixes the runs of several goroutines on one set:
// serialized runs must not bleed into each other.
func TestSanitySharedSet(t *testing.T) {
	w := workers.New("gtest-shared", 6)
	defer w.Close()
	done := make(chan struct{})
	for g := range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			t.Run(fmt.Sprintf("goroutine-%d", g), func(t *testing.T) {
				runSanity(t, w, 2+g*2, tries(t)/5, g%2 == 0)
			})
		}()
	}
	for range 3 {
		<-done
	}
}

func distinct(xs ...int) []int {
	var out []int
	for _, x := range xs {
		if x >= 1 && (len(out) == 0 || out[len(out)-1] != x) {
			out = append(out, x)
		}
	}
	return out
}
