//go:build !(amd64 || arm64) || purego

package goid

import (
	"runtime"
	"sync"
)

// bufs holds the header buffers: one on Get's stack would escape to the heap
// through runtime.Stack, an allocation per call.
var bufs = sync.Pool{New: func() any { return new([64]byte) }}

// Get returns the calling goroutine's identity token: its goroutine number,
// parsed from the header line "goroutine N [...]" that runtime.Stack writes.
func Get() uint64 {
	buf := bufs.Get().(*[64]byte)
	defer bufs.Put(buf)
	n := runtime.Stack(buf[:], false)
	return parseID(buf[:n])
}

// Fast reports whether Get costs about a nanosecond (false here: it parses a
// stack trace, microseconds): callers keep it off their fast paths.
const Fast = false
