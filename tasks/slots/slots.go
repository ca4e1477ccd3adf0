// Package slots provides Slots, one value per worker id, each kept on cache
// lines of its own, for reductions without false sharing: every copy of a
// task accumulates into its own slot, and the coordinator combines the slots
// after the run.
//
//	sums := slots.New[int](w.ActiveWorkers())
//	w.Run(tasks.Func("sum", func(worker int) {
//		p := sums.At(worker)
//		for i := worker; i < len(data); i += sums.Len() {
//			*p += data[i]
//		}
//	}))
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
	"iter"

	"github.com/workgang/workgang/internal/pad"
)

// Pad is the number of bytes between any two slots' values (and before the
// first and after the last): the larger of the CPU's cache line
// (x/sys/cpu.CacheLinePad: 64 bytes on amd64, 128 on arm64 and ppc64, 256 on
// s390x) and 128 bytes. 128 because x86 CPUs from Intel's Sandy Bridge on
// fetch 64-byte lines in aligned pairs (the adjacent-line, or spatial,
// prefetcher), so two values 64 bytes apart can still bounce a pair of lines
// between cores. It is the padding unit of the whole module: the dispatcher
// (package gang), the claiming helpers (tasks/claim, tasks/ranges), the
// deques and terminator of tasks/steal, tasks/phases and tasks/team pad their
// hot words to the same number of bytes.
//
// Because the pad lies between the values, rather than filling a slot up to
// a fixed size, a slot works for a T of any size: two values are always at
// least Pad bytes apart, so no cache line (nor aligned pair of lines) holds
// bytes of two of them, whatever the allocation's alignment.
const Pad = pad.CacheLine

// slot is one worker's value, preceded by a pad.
type slot[T any] struct {
	_ pad.Line
	v T
}

// Slots holds one value of type T per worker id, each on cache lines of its
// own. Worker w reads and writes only its own slot (At(w)) during a run; the
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
	// One slot more than asked for: its pad keeps the last value Pad bytes
	// away from whatever the allocator puts after the array.
	return &Slots[T]{s: make([]slot[T], n+1)[:n]}
}

// Len returns the number of slots.
func (s *Slots[T]) Len() int { return len(s.s) }

// At returns a pointer to worker's value, valid as long as s is. It panics
// if worker is outside [0, Len()).
func (s *Slots[T]) At(worker int) *T { return &s.s[worker].v }

// Get returns worker's value.
func (s *Slots[T]) Get(worker int) T { return s.s[worker].v }

// Set stores v as worker's value.
func (s *Slots[T]) Set(worker int, v T) { s.s[worker].v = v }

// Reset sets every value to T's zero value, for the next run.
func (s *Slots[T]) Reset() {
	var zero T
	for i := range s.s {
		s.s[i].v = zero
	}
}

// All returns an iterator over the workers' ids and pointers to their values,
// in id order.
func (s *Slots[T]) All() iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		for i := range s.s {
			if !yield(i, &s.s[i].v) {
				return
			}
		}
	}
}

// Reduce folds the values in worker id order: f(...f(f(init, v0), v1)..., vn-1).
func Reduce[T, A any](s *Slots[T], init A, f func(acc A, v T) A) A {
	acc := init
	for i := range s.s {
		acc = f(acc, s.s[i].v)
	}
	return acc
}

// Number is the constraint of Sum: the built-in integer and floating-point
// types and types based on them.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Sum returns the sum of the values (with Go's wrapping arithmetic for
// integers), adding them in worker id order.
func Sum[T Number](s *Slots[T]) T {
	var sum T
	for i := range s.s {
		sum += s.s[i].v
	}
	return sum
}
