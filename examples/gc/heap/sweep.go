package heap

import (
	"fmt"
	"math/bits"

	"github.com/workgang/workgang/examples/gc/mark"
)

// SweepWords is one chunk of a parallel sweep. For the slots of allocation
// words [lo, hi), slots 64*lo up to 64*hi (or Slots()), it makes the allocated
// set the set marked in b, writes the free slots to out in increasing order
// and returns how many it wrote and how many of them were allocated before
// (the objects it freed). out needs room for the chunk's slots, 64*(hi-lo).
//
// Chunks of distinct words may be swept concurrently: a chunk writes only its
// own allocation words and out. Building the free list from the chunks'
// outputs is the caller's next step (see FreeList).
func (h *Heap) SweepWords(b *mark.Bitmap, lo, hi int, out []uint32) (free, freed int) {
	slots := h.Slots()
	for i := lo; i < hi; i++ {
		valid := ^uint64(0)
		if rest := slots - 64*i; rest < 64 {
			valid = 1<<rest - 1 // the last word: slots past the end are not free
		}
		live := b.Word(i) & valid
		freed += bits.OnesCount64(h.alloc[i] &^ live)
		h.alloc[i] = live
		// Visit the zero bits of live (within valid), lowest first.
		for dead := ^live & valid; dead != 0; dead &= dead - 1 {
			out[free] = uint32(64*i + bits.TrailingZeros64(dead))
			free++
		}
	}
	return free, freed
}

// Words returns the number of allocation words: the length of a sweep over the
// whole heap in SweepWords's unit.
func (h *Heap) Words() int { return len(h.alloc) }

// FreeList resizes the free list to n slots and returns it for the caller to
// fill (in increasing order, to match Collect); parts of it may be filled
// concurrently. It panics if n is outside [0, Slots()].
func (h *Heap) FreeList(n int) []uint32 {
	if n < 0 || n > h.Slots() {
		panic(fmt.Sprintf("heap: FreeList(%d): out of range [0, %d]", n, h.Slots()))
	}
	if cap(h.free) < n {
		h.free = make([]uint32, n, h.Slots())
	}
	h.free = h.free[:n]
	return h.free
}

// ProcessWeak is the reference-processing step of a collection, after the
// mark and before the sweep: a weak reference whose holder is unmarked in b is
// dropped, and one whose referent is unmarked is cleared (its Referent set to
// Null). It keeps the order of the references it keeps, and returns how many
// it cleared and dropped. It is serial: a collector runs it on one copy.
func (h *Heap) ProcessWeak(b *mark.Bitmap) (cleared, dropped int) {
	kept := h.weak[:0]
	for _, w := range h.weak {
		switch {
		case !b.Marked(w.Holder):
			dropped++
			continue
		case !b.Marked(w.Referent):
			w.Referent = Null
			cleared++
		}
		kept = append(kept, w)
	}
	clear(h.weak[len(kept):]) // nothing to release, but keep the tail tidy
	h.weak = kept
	return cleared, dropped
}
