// Package pad holds the library's one decision on padding: how far apart two
// words must be so that goroutines writing them on different processors never
// write the same cache line. Every padded struct of the module (the
// dispatcher's run and end words, the claiming helpers, the deques and
// terminator of tasks/steal, per-worker slots, the perf harness) is laid out
// in units of CacheLine, and its layout test checks the offsets in the same
// unit.
//
// The package imports only the standard library and golang.org/x/sys/cpu.
package pad

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// CacheLine is the padding unit in bytes: the larger of 128 and the cache
// line size golang.org/x/sys/cpu reports for the target (the size of
// cpu.CacheLinePad: 64 on amd64, 128 on arm64 and ppc64, 256 on s390x). So
// it is 128 everywhere except on s390x, where it is 256.
//
// Why 128 on amd64, where lines are 64 bytes: Intel CPUs from Sandy Bridge
// on (and recent AMD ones) have an adjacent-line ("spatial") prefetcher that
// fetches 64-byte lines in aligned 128-byte pairs, so two hot words 64 bytes
// apart still move a pair of lines between cores on every write.
// crossbeam-utils' CachePadded pads to 128 on x86-64 for the same reason.
// Some arm64 cores (Apple's) have 128-byte lines.
//
// Why not the type cpu.CacheLinePad itself: it is 64 bytes on amd64, which
// leaves the adjacent-line pairs, and a struct type cannot express the
// remainder of a line after a field ("CacheLine - 16"), which every padded
// struct here needs. Its size serves as the floor, so no target with larger
// lines gets less than a line.
//
// Padding is for words that different goroutines write at the same time; a
// field read by all and written rarely shares a line with its readers on
// purpose. Each padded type says in a comment which of its words have lines
// of their own.
const CacheLine = max(128, int(unsafe.Sizeof(cpu.CacheLinePad{})))

// Line is one CacheLine of padding, for a field "_ pad.Line" that starts a
// struct's hot word on a line of its own (or ends the last one).
type Line [CacheLine]byte
