// Package testutil holds the helpers that the module's tests share: running
// n copies of a function on goroutines, a hang detector, telling how a call
// ended (return, panic or runtime.Goexit), waiting for an object to be
// collected, and checking a padded struct's layout. It is imported by _test.go files only;
// no library package imports it.
//
// The package imports only the standard library and internal/pad.
package testutil

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/workgang/workgang/internal/pad"
)

// RunCopies runs fn(0), ..., fn(n-1) on n new goroutines, as a worker set's
// RunN would, and returns when all have returned. The goroutines start
// together: each waits for a gate that opens once all of them exist, so the
// copies overlap as far as the scheduler lets them. Every copy's return is
// synchronized before RunCopies returns (sync.WaitGroup). A panic in fn
// crashes the test binary, as on any goroutine.
func RunCopies(n int, fn func(id int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for id := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(id)
		}()
	}
	close(start)
	wg.Wait()
}

// Within runs fn on a goroutine of its own and returns when fn has returned.
// If fn has not returned within limit, Within ends the test binary with a
// panic whose message names the test and what, and carries every
// goroutine's stack: a hung call cannot be unblocked from outside, and the
// test's deferred cleanups (Close, goleak) would only hang behind it. limit
// is a hang detector, to be set far above the call's duration on a loaded
// machine, never a timing assertion.
func Within(t testing.TB, what string, limit time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		OnHang(fmt.Sprintf("%s: %s: hung (not done after %v). All goroutines:\n%s", t.Name(), what, limit, AllStacks()))
	}
}

// OnHang is what Within does with a hang: it panics with msg on a goroutine
// without deferred calls, so the binary ends at once (on the test's
// goroutine the panic would first run the test's deferred calls, a Close
// among them, which would wait for the hung call). Tests of Within replace
// it.
var OnHang = func(msg string) {
	go func() { panic(msg) }()
	select {}
}

// AllStacks returns the stacks of all goroutines, as a crash prints them, for
// the message of a hang detector.
func AllStacks() []byte {
	buf := make([]byte, 8<<20)
	return buf[:runtime.Stack(buf, true)]
}

// Outcome is how a call ended: it returned, panicked (Value holds the
// recovered value, never nil: since Go 1.21 panic(nil) panics with a
// *runtime.PanicNilError) or called runtime.Goexit.
type Outcome struct {
	Panicked bool // the call panicked with Value
	Value    any  // the recovered panic value
	Goexit   bool // the call called runtime.Goexit
}

// Returned reports whether the call returned normally.
func (o Outcome) Returned() bool { return !o.Panicked && !o.Goexit }

// Call runs fn on a new goroutine, so that a runtime.Goexit in it ends only
// that goroutine, and reports how fn ended. fn's effects are synchronized
// before Call returns.
func Call(fn func()) (o Outcome) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		returned := false
		defer func() {
			if returned {
				return
			}
			// Not returned: a panic (recover gives its value, non-nil) or
			// a Goexit (recover gives nil and the goroutine goes on ending).
			if v := recover(); v != nil {
				o.Panicked, o.Value = true, v
			} else {
				o.Goexit = true
			}
		}()
		fn()
		returned = true
	}()
	<-done
	return o
}

// OnCollect returns a channel that is closed once the garbage collector has
// found p unreachable (a cleanup attached with runtime.AddCleanup). p must
// point to the start of an allocation of its own that is not a tiny one (at
// least 16 bytes, or containing pointers): for tiny allocations the runtime
// may never run the cleanup.
func OnCollect[T any](p *T) <-chan struct{} {
	collected := make(chan struct{})
	runtime.AddCleanup(p, func(c chan struct{}) { close(c) }, collected)
	return collected
}

// Collected runs the garbage collector until collected is closed (see
// OnCollect) or about timeout has passed, and reports whether it was closed.
// Cleanups run on a goroutine of their own after a cycle, so one cycle is
// not always enough.
func Collected(collected <-chan struct{}, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		runtime.GC()
		select {
		case <-collected:
			return true
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// Line describes where a field of a padded struct lies: name for messages,
// its offset and size (unsafe.Offsetof and unsafe.Sizeof).
type Line struct {
	Name         string
	Offset, Size uintptr
}

// OnLine checks that field f lies inside line number line of its struct,
// counted in pad.CacheLine units from the struct's start (line 1 is the
// second unit: most padded structs start with a pad.Line, so that their
// first hot word is a whole unit away from whatever precedes them).
func OnLine(t testing.TB, f Line, line int) {
	t.Helper()
	unit := uintptr(pad.CacheLine)
	lo, hi := uintptr(line)*unit, uintptr(line+1)*unit
	if f.Offset < lo || f.Offset+f.Size > hi {
		t.Errorf("%s at [%d, %d) is not inside line %d = [%d, %d) (pad.CacheLine = %d)",
			f.Name, f.Offset, f.Offset+f.Size, line, lo, hi, pad.CacheLine)
	}
}

// WholeLines checks that a padded type's size is a whole number of
// pad.CacheLine units, so that the last hot word's trailing pad reaches the
// end of its line and consecutive array elements keep their lines apart.
func WholeLines(t testing.TB, name string, size uintptr) {
	t.Helper()
	if size == 0 || size%uintptr(pad.CacheLine) != 0 {
		t.Errorf("size of %s = %d; want a positive multiple of pad.CacheLine = %d", name, size, pad.CacheLine)
	}
}
