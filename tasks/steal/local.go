package steal

import (
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
)

// Local is a worker's private stack in front of its deque, for Set.Drain:
// the way a collector's marker keeps the objects it discovers to itself while
// nobody needs them. Push is a plain append, with no atomic operation, so a
// worker that finds its own work pays what a serial traversal pays for its
// stack; values on the stack are invisible to thieves until Drain
// publishes some of them to the deque, which it does only when another worker
// is hungry (see Set.Drain).
//
// Each worker of a Set has one, which Drain hands to process; only the
// goroutine running copy w of the phase may use worker w's, and across
// phases only with a happens-before edge between the users (the end and
// start of worker-set runs give it). The stack keeps its array between
// phases.
type Local[T any] struct {
	stack []T // the values are stack[lo:], the newest last
	lo    int // stack[:lo] was published to the deque; reclaimed lazily
	w     int
	// After the fields above: a slice header (the same size for every T)
	// and two ints.
	_ [uintptr(pad.CacheLine) - unsafe.Sizeof([]byte(nil)) - 2*unsafe.Sizeof(0)]byte
}

// Push adds v to the top of the stack.
func (l *Local[T]) Push(v T) { l.stack = append(l.stack, v) }

// count returns the number of values on the stack.
func (l *Local[T]) count() int { return len(l.stack) - l.lo }

// Worker returns the id of the worker that owns the stack.
func (l *Local[T]) Worker() int { return l.w }

// pop removes the newest value.
func (l *Local[T]) pop() (v T, ok bool) {
	n := len(l.stack)
	if n == l.lo {
		return v, false
	}
	v = l.stack[n-1]
	l.stack = l.stack[:n-1]
	if n-1 == l.lo {
		// Empty: reset, so that the published prefix is reclaimed. The
		// slots keep their old values until overwritten: a Local holds
		// plain values of T, and Clear zeroes them when that matters.
		l.stack, l.lo = l.stack[:0], 0
	}
	return v, true
}

// publish moves the oldest half of the stack, at most most values, to q with
// one PushSlice. The oldest values are the ones nearest the start of the
// traversal: in a graph they usually lead to the largest parts of the work, so
// a thief that takes one stays busy longest.
func (l *Local[T]) publish(q *deque[T], most int) {
	h := min(l.count()/2, most)
	if h == 0 {
		return
	}
	// PushSlice copies the values into the deque's array and publishes them
	// with its own store of bottom (see deque), so the prefix published here
	// is the owner's to reuse at once: no thief ever reads l.stack.
	q.PushSlice(l.stack[l.lo : l.lo+h])
	l.lo += h
	if l.lo > len(l.stack)/2 {
		// More than half of the array is a dead prefix: move the live
		// values down so that the array does not grow without bound.
		n := copy(l.stack, l.stack[l.lo:])
		l.stack, l.lo = l.stack[:n], 0
	}
}

// clear empties the stack and zeroes its slots, so that it keeps nothing
// reachable.
func (l *Local[T]) clear() {
	clear(l.stack[:cap(l.stack)])
	l.stack, l.lo = l.stack[:0], 0
}
