// Package catch runs the module's calls of user code: a function that may
// panic, panic(nil) or call runtime.Goexit, told apart without trusting
// recover's result.
//
// The package imports only the standard library.
package catch

import "runtime/debug"

// Call runs f and tells how it ended. It recovers a panic and returns, with
// the value and the stack of the panic site (taken in the deferred call);
// only a runtime.Goexit leaves it without returning, which a caller tells by
// a flag set after Call returns. The flag, not recover's result, tells a
// Goexit from a panic(nil): under GODEBUG=panicnil=1 recover returns nil for
// both. A Goexit, whose results nobody reads, costs no stack: a nil from
// recover is a panic only where a panic(nil) of its own recovers nil too. f
// does not escape, so a closure passed here stays on the stack.
func Call(f func()) (panicked bool, v any, stack []byte) {
	normal := false
	defer func() {
		if !normal {
			if v = recover(); v != nil || nilRecovers() {
				panicked, stack = true, debug.Stack()
			}
		}
	}()
	f()
	normal = true
	return false, nil, nil
}

// nilRecovers reports whether recover returns nil for a panic(nil)
// (GODEBUG=panicnil=1), asking the runtime each time: a program may change
// GODEBUG while it runs.
func nilRecovers() (yes bool) {
	defer func() { yes = recover() == nil }()
	panic(nil)
}

// Aside runs f on a new goroutine, waits for it and reports whether f
// returned. If f calls runtime.Goexit, that ends the new goroutine only, and
// frees its stack: a goroutine that must go on after a Goexit of its own (it
// runs only deferred calls then, above the Goexit's frames) calls code that
// may exit again through Aside, so the frames of one Goexit never stay under
// the next. f must not panic: nothing recovers it there. The go statement
// orders the caller's writes before f; the send, f's writes before the
// return.
func Aside(f func()) (returned bool) {
	done := make(chan bool)
	go func() {
		returned := false
		defer func() { done <- returned }()
		f()
		returned = true
	}()
	return <-done
}
