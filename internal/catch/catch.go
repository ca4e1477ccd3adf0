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
// both. f does not escape, so a closure passed here stays on the stack.
func Call(f func()) (panicked bool, v any, stack []byte) {
	normal := false
	defer func() {
		if !normal { // a panic, or a Goexit whose results nobody reads
			panicked, v, stack = true, recover(), debug.Stack()
		}
	}()
	f()
	normal = true
	return false, nil, nil
}
