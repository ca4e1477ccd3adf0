package heap

import (
	"errors"
	"fmt"
	"slices"

	"github.com/workgang/workgang/examples/gc/mark"
)

// Result is what a collection did.
type Result struct {
	Marked  int // live objects, Null included
	Freed   int // objects freed
	Free    int // free slots afterwards
	Cleared int // weak references cleared
	Dropped int // weak references dropped with their holder
}

// Collect is the serial reference collector: it marks the heap with
// mark.MarkSerial into b (which needs room for Slots() objects), processes the
// weak references, and sweeps slot by slot, leaving the free slots in
// increasing order. It shares no code with the parallel collector's steps
// (SweepWords, ProcessWeak), so that checking one against the other (Diff)
// can find a fault in either.
func Collect(h *Heap, b *mark.Bitmap) Result {
	var r Result
	r.Marked = mark.MarkSerial(h.graph, b)
	var weak []Weak
	for _, w := range h.weak {
		if !b.Marked(w.Holder) {
			r.Dropped++
			continue
		}
		if !b.Marked(w.Referent) {
			w.Referent = Null
			r.Cleared++
		}
		weak = append(weak, w)
	}
	h.weak = append(h.weak[:0], weak...)
	h.free = h.free[:0]
	for s := range uint32(h.Slots()) {
		switch {
		case b.Marked(s):
			h.setAlloc(s)
		default:
			if h.Allocated(s) {
				r.Freed++
				h.clearAlloc(s)
			}
			h.free = append(h.free, s)
		}
	}
	r.Free = len(h.free)
	return r
}

// Diff compares a heap collected by a parallel collector with the same heap
// collected by Collect and returns nil if they are identical, or an error
// describing the first differences: a live object freed, a dead object not
// freed, a different free list, weak references or field.
func Diff(got, want *Heap) error {
	if got.Slots() != want.Slots() {
		return fmt.Errorf("heap: Diff: %d slots, want %d", got.Slots(), want.Slots())
	}
	var errs []error
	for s := range uint32(got.Slots()) {
		if len(errs) == 4 {
			break
		}
		switch g, w := got.Allocated(s), want.Allocated(s); {
		case w && !g:
			errs = append(errs, fmt.Errorf("live object %d freed", s))
		case g && !w:
			errs = append(errs, fmt.Errorf("dead object %d not freed", s))
		}
	}
	if !slices.Equal(got.free, want.free) {
		errs = append(errs, fmt.Errorf("free list of %d slots, want %d (first difference at %d)",
			len(got.free), len(want.free), firstDiff(got.free, want.free)))
	}
	if !slices.Equal(got.weak, want.weak) {
		errs = append(errs, fmt.Errorf("%d weak references, want %d (first difference at %d)",
			len(got.weak), len(want.weak), firstDiff(got.weak, want.weak)))
	}
	if i := firstDiff(got.fields, want.fields); i < len(got.fields) || len(got.fields) != len(want.fields) {
		errs = append(errs, fmt.Errorf("field %d differs", i))
	}
	if !slices.Equal(got.roots, want.roots) {
		errs = append(errs, errors.New("roots differ"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("heap: collection differs from the serial reference: %w", errors.Join(errs...))
	}
	return nil
}

// firstDiff returns the first index at which a and b differ, or the shorter
// length.
func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
