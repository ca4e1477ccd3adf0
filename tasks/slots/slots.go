// Package slots provides Slots, one value per worker id, each kept on cache
// lines of its own, for reductions without false sharing: every copy of a
// task accumulates into its own slot, and the coordinator combines the slots
// after the run.
//
//	sums := slots.New[int](n)
//	w.RunN(tasks.Func("sum", func(worker int) {
//		p := sums.At(worker)
//		for i := worker; i < len(data); i += n {
//			*p += data[i]
//		}
//	}), n)
//	total := slots.Sum(sums)
//
// A plain []int of per-worker partial sums puts the values of 8 workers on one
// 64-byte line, so every add by one worker invalidates that line in the
// others' caches (false sharing); BenchmarkAdjacentVsPadded measures the
// difference.
//
// The package imports only the standard library and internal/pad (which
// imports golang.org/x/sys/cpu).
package slots

import (
	"fmt"

	"github.com/workgang/workgang/internal/pad"
)

// slot is one worker's value, preceded by a pad.
type slot[T any] struct {
	_ pad.Line
	v T
}

// Slots holds one value of type T per worker id, each on cache lines of its
// own: any two values, and the first and last and their neighbours in
// memory, are at least the module's padding unit apart (the larger of the
// CPU's cache line and 128 bytes, since x86 CPUs fetch 64-byte lines in
// aligned pairs). Because the pad lies between the values, rather than
// filling a slot up to a fixed size, this holds for a T of any size.
//
// Worker w reads and writes only its own slot (At(w)) during a run; the
// coordinator reads the slots after the run, which the run orders after
// every copy's writes (package workers' Run and RunN synchronize each copy's
// return before their own). Distinct workers may use their slots at the same
// time; one slot must not be written by two goroutines at once.
//
// The zero value has no slots; create Slots with New. A Slots must not be
// copied (copies would share the values).
type Slots[T any] struct {
	s []slot[T]
}

// New returns n slots holding T's zero value. It panics if n is negative.
func New[T any](n int) *Slots[T] {
	if n < 0 {
		panic(fmt.Sprintf("slots: New: negative length %d", n))
	}
	// One slot more than asked for: its pad keeps the last value a whole
	// pad away from whatever the allocator puts after the array.
	return &Slots[T]{s: make([]slot[T], n+1)[:n]}
}

// At returns a pointer to worker's value, valid as long as s is. It panics
// if worker is outside [0, n).
func (s *Slots[T]) At(worker int) *T { return &s.s[worker].v }

// Reset sets every value to T's zero value, for the next run.
func (s *Slots[T]) Reset() {
	var zero T
	for i := range s.s {
		s.s[i].v = zero
	}
}

// number is the constraint of Sum: the built-in integer and floating-point
// types and types based on them.
type number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Sum returns the sum of the values (with Go's wrapping arithmetic for
// integers), adding them in worker id order.
func Sum[T number](s *Slots[T]) T {
	var sum T
	for i := range s.s {
		sum += s.s[i].v
	}
	return sum
}
