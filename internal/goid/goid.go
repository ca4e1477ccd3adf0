// Package goid identifies the running goroutine. Go offers no public goroutine
// identity; workgang needs one for a single purpose: to tell, when a worker set
// is busy, whether the goroutine asking to run a task is the one already running
// a task of that set (a nested run, which would deadlock) or another goroutine
// (which should simply wait its turn).
//
// Get returns an opaque non-zero token that is equal for two calls on the same
// goroutine and different for two goroutines alive at the same time. A token
// may be reused after its goroutine exits, so it must only be compared while
// the goroutine it names is known to be alive.
//
// On amd64 and arm64 Get reads the runtime's current-goroutine pointer in one
// instruction (the same technique as github.com/petermattis/goid, written here
// from the ABI, not copied). Elsewhere it parses the goroutine number from
// runtime.Stack, which is correct but costs microseconds. The token is a
// uint64 on every platform: goroutine numbers are, and a process on a 32-bit
// platform may create more than 2^32 goroutines, so a uintptr token would
// wrap and give a goroutine created late the token of a long-lived one (or
// 0).
package goid

// parseID returns the goroutine number N of the header "goroutine N [...]"
// that starts b (runtime.Stack's first line). It panics if there is none.
func parseID(b []byte) uint64 {
	const prefix = "goroutine "
	var id uint64
	if len(b) > len(prefix) && string(b[:len(prefix)]) == prefix {
		for _, c := range b[len(prefix):] {
			if c < '0' || c > '9' {
				break
			}
			id = id*10 + uint64(c-'0')
		}
	}
	if id == 0 {
		panic("goid: cannot parse goroutine header " + string(b))
	}
	return id
}
