package testutil_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every id runs once, and all copies run at the same time: each waits until
// all have started, which would never happen if RunCopies ran them in turn.
func TestRunCopies(t *testing.T) {
	const n = 4
	var seen [n]atomic.Int32
	var arrived sync.WaitGroup
	arrived.Add(n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		testutil.RunCopies(n, func(id int) {
			seen[id].Add(1)
			arrived.Done()
			arrived.Wait()
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunCopies: the copies did not all run at once")
	}
	for id := range seen {
		assert.Equal(t, int32(1), seen[id].Load(), "copy %d", id)
	}
	testutil.RunCopies(0, func(int) { t.Error("RunCopies(0) ran a copy") })
}

// Within returns once fn has returned; a call that does not return in time
// ends in a panic naming it, with the stacks of all goroutines (the stuck
// one is released afterwards, so it does not leak).
func TestWithin(t *testing.T) {
	ran := false
	testutil.Within(t, "quick", time.Minute, func() { ran = true })
	assert.True(t, ran, "Within did not run fn, or returned before it")

	release := make(chan struct{})
	defer func(old func(string)) { testutil.OnHang = old }(testutil.OnHang)
	testutil.OnHang = func(msg string) { panic(msg) }
	v := func() (v any) {
		defer func() { v = recover() }()
		testutil.Within(t, "stuck call", 10*time.Millisecond, func() { <-release })
		return nil
	}()
	close(release)
	msg, _ := v.(string)
	assert.Contains(t, msg, "stuck call: hung (not done after 10ms)")
	assert.Contains(t, msg, "testutil_test.TestWithin", "the stacks are in the message")
}

func TestCall(t *testing.T) {
	boom := errors.New("boom")
	ran := false
	for _, tc := range []struct {
		name string
		fn   func()
		want testutil.Outcome
	}{
		{"returns", func() { ran = true }, testutil.Outcome{}},
		{"panics", func() { panic(boom) }, testutil.Outcome{Panicked: true, Value: boom}},
		{"goexit", func() { runtime.Goexit() }, testutil.Outcome{Goexit: true}},
		{"goexit after recovered panic", func() {
			defer runtime.Goexit()
			panic(boom)
		}, testutil.Outcome{Goexit: true}},
	} {
		got := testutil.Call(tc.fn)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, !tc.want.Panicked && !tc.want.Goexit, got.Returned(), tc.name)
	}
	assert.True(t, ran, "Call did not run fn, or its effect was not visible after Call")

	// panic(nil) is a panic, not a Goexit.
	o := testutil.Call(func() { panic(nil) })
	require.True(t, o.Panicked)
	var pn *runtime.PanicNilError
	assert.ErrorAs(t, o.Value.(error), &pn)
}

// blob is large enough not to be a tiny allocation (see OnCollect).
type blob [64]byte

func TestCollected(t *testing.T) {
	p := &blob{}
	collected := testutil.OnCollect(p)
	p = nil
	assert.True(t, testutil.Collected(collected, 5*time.Second), "an unreachable object was not collected")

	kept := &blob{}
	collected = testutil.OnCollect(kept)
	assert.False(t, testutil.Collected(collected, 30*time.Millisecond), "a reachable object was reported collected")
	runtime.KeepAlive(kept)
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestLayoutChecks(t *testing.T) {
	u := uintptr(pad.CacheLine)
	for _, tc := range []struct {
		name string
		f    testutil.Line
		line int
		ok   bool
	}{
		{"start of line 1", testutil.Line{"w", u, 8}, 1, true},
		{"end of line 1", testutil.Line{"w", 2*u - 8, 8}, 1, true},
		{"in line 0", testutil.Line{"w", u - 8, 8}, 1, false},
		{"straddles", testutil.Line{"w", 2*u - 4, 8}, 1, false},
		{"in line 2", testutil.Line{"w", 2 * u, 8}, 1, false},
	} {
		r := &recorder{TB: t}
		testutil.OnLine(r, tc.f, tc.line)
		assert.Equal(t, tc.ok, len(r.errs) == 0, "%s: %v", tc.name, r.errs)
	}
	for size, ok := range map[uintptr]bool{0: false, u / 2: false, u: true, 3 * u: true, 3*u + 8: false} {
		r := &recorder{TB: t}
		testutil.WholeLines(r, "T", size)
		assert.Equal(t, ok, len(r.errs) == 0, "size %d: %v", size, r.errs)
	}
}
