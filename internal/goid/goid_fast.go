//go:build (amd64 || arm64) && !purego

package goid

// getg returns the address of the runtime's g structure for the calling
// goroutine. g structures are never moved or freed while their goroutine is
// alive (the runtime keeps them in allgs and recycles them only after exit),
// so the address is a stable identity for the goroutine's lifetime.
func getg() uintptr

// Get returns the calling goroutine's identity token.
func Get() uint64 { return uint64(getg()) }

// Fast reports whether Get costs about a nanosecond (true here): callers may
// then call it on every run, not only on slow paths.
const Fast = true
