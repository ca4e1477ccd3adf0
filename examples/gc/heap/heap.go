// Package heap is the simulated heap of the examples/gc collector: an arena
// of object slots with pointer fields, roots, weak references, an allocation
// bitmap and a free list; a mutator that allocates, drops and rewires objects
// between collections; the per-chunk steps a parallel sweep is made of; and
// Collect, the serial reference collector every parallel cycle is checked
// against.
//
// Slot 0 is the null object: it has no fields, is always a root, and a nil
// field points to it. So a mark needs no nil test (marking the null object
// again costs one load of a word every core has cached), and every slot is
// an ordinary graph node (see mark.NewCSR).
package heap

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/workgang/workgang/examples/gc/mark"
)

// Null is the null object's slot: a nil field holds Null.
const Null = 0

// Weak is a weak reference: Holder refers to Referent without keeping it
// alive. After a collection Referent is Null if the referent died; the
// reference itself is dropped when its holder dies.
type Weak struct{ Holder, Referent uint32 }

// Heap is an arena of object slots. Slot i has a fixed number of pointer
// fields, Fields(i); an allocated object uses the fields of its slot. Create
// one with New. A Heap is not safe for concurrent use, except as documented
// for the sweep steps (SweepWords).
type Heap struct {
	start  []uint32 // slot i's fields are fields[start[i]:start[i+1]]
	fields []uint32
	roots  []uint32 // roots[0] is Null
	alloc  []uint64 // allocation bitmap, bit i%64 of word i/64 for slot i
	free   []uint32 // free slots; allocation takes the last
	weak   []Weak
	graph  *mark.Graph
	src    *rand.PCG // the mutator's random state, copied by Clone
	rng    *rand.Rand
}

// New returns a heap of slots slots. Its objects start as a synthetic graph of
// the given shape (mark.NewGraph) over three quarters of the slots, all
// allocated, with the graph's roots; the other quarter is free. One in 16
// objects holds a weak reference to a random object. The same arguments give
// the same heap, and the same sequence of Mutate steps the same states. It
// panics if slots is outside [8, mark.MaxObjects].
func New(shape mark.Shape, slots int, seed uint64) *Heap {
	if slots < 8 || slots > mark.MaxObjects {
		panic(fmt.Sprintf("heap: New: slots = %d out of range [8, %d]", slots, mark.MaxObjects))
	}
	objs := slots * 3 / 4
	g := mark.NewGraph(shape, objs, seed)
	h := &Heap{
		start: make([]uint32, slots+1),
		alloc: make([]uint64, (slots+63)/64),
		src:   rand.NewPCG(seed, 0x6c),
	}
	h.rng = rand.New(h.src)
	// Object k of the graph lives in slot k+1; slot 0 is Null.
	h.fields = make([]uint32, 0, g.Edges()+(slots-objs)*4)
	for s := 1; s < slots; s++ {
		h.start[s] = uint32(len(h.fields))
		if s <= objs {
			for _, c := range g.Children(uint32(s - 1)) {
				h.fields = append(h.fields, c+1)
			}
		} else {
			// A free slot: room for 0..8 fields, like the random shape.
			for range h.rng.IntN(9) {
				h.fields = append(h.fields, Null)
			}
		}
	}
	h.start[slots] = uint32(len(h.fields))
	h.roots = append(h.roots, Null)
	for _, r := range g.Roots() {
		h.roots = append(h.roots, r+1)
	}
	for s := 0; s <= objs; s++ {
		h.setAlloc(uint32(s))
	}
	for s := objs + 1; s < slots; s++ {
		h.free = append(h.free, uint32(s))
	}
	for s := 1; s <= objs; s += 16 {
		h.weak = append(h.weak, Weak{Holder: uint32(s), Referent: uint32(1 + h.rng.IntN(objs))})
	}
	h.graph = mark.NewCSR(h.start, h.fields, h.roots)
	return h
}

// Slots returns the number of slots, Null included.
func (h *Heap) Slots() int { return len(h.start) - 1 }

// Graph returns the heap as a graph for marking: it aliases the heap's
// arrays, so it follows every change the mutator makes.
func (h *Heap) Graph() *mark.Graph { return h.graph }

// Fields returns slot obj's fields. The caller must not keep the slice across
// a Mutate.
func (h *Heap) Fields(obj uint32) []uint32 { return h.fields[h.start[obj]:h.start[obj+1]] }

// Roots returns the roots; Roots()[0] is Null.
func (h *Heap) Roots() []uint32 { return h.roots }

// Allocated reports whether slot obj holds an object.
func (h *Heap) Allocated(obj uint32) bool { return h.alloc[obj/64]&(1<<(obj%64)) != 0 }

func (h *Heap) setAlloc(obj uint32)   { h.alloc[obj/64] |= 1 << (obj % 64) }
func (h *Heap) clearAlloc(obj uint32) { h.alloc[obj/64] &^= 1 << (obj % 64) }

// Live returns the number of allocated slots, Null included.
func (h *Heap) Live() int {
	n := 0
	for _, w := range h.alloc {
		n += bits.OnesCount64(w)
	}
	return n
}

// Free returns the free slots. After New and after a collection they are in
// increasing order; allocation takes the last.
func (h *Heap) Free() []uint32 { return h.free }

// WeakRefs returns the weak references.
func (h *Heap) WeakRefs() []Weak { return h.weak }

// Clone returns a deep copy of h, mutator state included.
func (h *Heap) Clone() *Heap {
	c := &Heap{
		start:  h.start, // never written after New
		fields: append([]uint32(nil), h.fields...),
		roots:  append([]uint32(nil), h.roots...),
		alloc:  append([]uint64(nil), h.alloc...),
		free:   append(make([]uint32, 0, h.Slots()), h.free...),
		weak:   append([]Weak(nil), h.weak...),
	}
	src := *h.src
	c.src = &src
	c.rng = rand.New(c.src)
	c.graph = mark.NewCSR(c.start, c.fields, c.roots)
	return c
}

// CopyFrom makes h a copy of o, which must come from the same New call (or a
// Clone of it), reusing h's arrays: the perf harness restores one snapshot
// before each collector it times.
func (h *Heap) CopyFrom(o *Heap) {
	if len(h.start) != len(o.start) || len(h.fields) != len(o.fields) || len(h.roots) != len(o.roots) {
		panic("heap: CopyFrom: heaps of different layouts")
	}
	copy(h.fields, o.fields)
	copy(h.roots, o.roots)
	copy(h.alloc, o.alloc)
	h.free = append(h.free[:0], o.free...)
	h.weak = append(h.weak[:0], o.weak...)
	*h.src = *o.src
}

// Step sizes what one Mutate call does, as fractions of the heap: every step
// allocates up to Slots/AllocEvery objects, rewires Slots/RewireEvery fields and
// replaces one root in RootEvery.
const (
	AllocEvery  = 32
	RewireEvery = 32
	RootEvery   = 8
)

// Mutate is one step of the program between two collections: it allocates
// objects from the free list (with fields pointing to random allocated
// objects, one in eight holding a weak reference, and half of them stored in
// a field of a random allocated object, the others dying young), sets random fields of allocated objects to other objects
// or to nil, and replaces some roots. So every cycle finds a different heap:
// new objects, objects dropped, pointers moved. It returns the number of
// objects allocated; allocation stops early when the free list runs out.
//
// The mutator chooses among allocated slots, live or not, as if the program
// still held references to them: the collector's correctness does not depend
// on it (it marks what is reachable at the pause).
func (h *Heap) Mutate() int {
	n := h.Slots()
	allocated := 0
	for range max(1, n/AllocEvery) {
		if len(h.free) == 0 {
			break
		}
		obj := h.free[len(h.free)-1]
		h.free = h.free[:len(h.free)-1]
		h.setAlloc(obj)
		allocated++
		for i := range h.Fields(obj) {
			h.Fields(obj)[i] = h.pick()
		}
		if h.rng.IntN(8) == 0 {
			h.weak = append(h.weak, Weak{Holder: obj, Referent: h.pick()})
		}
		if h.rng.IntN(2) == 0 {
			h.link(obj) // the other half are temporaries, garbage at once
		}
	}
	for range max(1, n/RewireEvery) {
		target := uint32(Null)
		if h.rng.IntN(2) == 0 {
			target = h.pick()
		}
		h.setRandomField(h.pick(), target)
	}
	for range max(1, len(h.roots)/RootEvery) {
		if len(h.roots) > 1 {
			h.roots[1+h.rng.IntN(len(h.roots)-1)] = h.pick()
		}
	}
	return allocated
}

// pick returns a random allocated slot, or Null if a few tries find none.
func (h *Heap) pick() uint32 {
	for range 16 {
		obj := uint32(h.rng.IntN(h.Slots()))
		if h.Allocated(obj) {
			return obj
		}
	}
	return Null
}

// link stores obj in a random field of a random allocated object, or in a
// root if a few tries find no object with fields.
func (h *Heap) link(obj uint32) {
	for range 8 {
		if h.setRandomField(h.pick(), obj) {
			return
		}
	}
	if len(h.roots) > 1 {
		h.roots[1+h.rng.IntN(len(h.roots)-1)] = obj
	}
}

// setRandomField stores target in a random field of holder and reports
// whether holder has any field.
func (h *Heap) setRandomField(holder, target uint32) bool {
	f := h.Fields(holder)
	if len(f) == 0 {
		return false
	}
	f[h.rng.IntN(len(f))] = target
	return true
}
