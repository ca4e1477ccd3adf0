package steal

import (
	"sync/atomic"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
)

// minSlots is the size of a deque's first array; arrays are powers of two.
const minSlots = 64

// renewSlots is the size up to which a renewed array doubles even though its
// live values would fit in the old size: renewal is driven by indices moving
// up (each steal, and each pop of a deque's last value, moves them by one),
// and a larger array makes it rarer.
const renewSlots = 4096

// deque is a work-stealing deque of values of type T (Chase and Lev, "Dynamic
// Circular Work-Stealing Deque", SPAA 2005, with the array never reused; see
// below). One goroutine, the owner, pushes and pops at the bottom, in LIFO
// order; any number of thieves steal from the top, in FIFO order. Push never
// fails: the array grows as needed.
//
// The zero value is an empty deque ready to use. A deque must not be copied
// after first use. Ownership may pass from one goroutine to another only with
// a happens-before edge between them (for example across the end and start of
// a package workers run).
//
// Every value pushed is returned exactly once, by Pop or by Steal, unless
// Clear drops it. Pop and Steal never allocate; Push allocates only when it
// grows or renews the array. Indices only grow, and they move up by one for
// every value that leaves through the top (a steal, or the owner's pop of the
// deque's last value), so the bottom eventually reaches the end of the array
// even if few values are live; the owner then copies the live values to a
// fresh array. Renewed arrays double up to 4096 slots, and every new array
// has at least twice as many slots as live values, so in the steady state a
// deque with len slots holding about live values renews its array once per
// len-live values that left through the top: about 4096-live for a deque that
// never held more than 2048 values, and never fewer than len/2. Amortized,
// that is sizeof(T)*len/(len-live) bytes per such value, between one and two
// sizeof(T), and no allocation per operation.
//
// # How the slots look to the race detector and to the garbage collector
//
// The slots are plain memory of type T, read and written without atomics, yet
// no access to a slot races with another in the sense of the Go memory model,
// so the race detector is silent and T may be any type (a pointer, an index,
// a struct). Three rules make that so:
//
//  1. Indices are absolute and only grow; an array holds the indices
//     [base, base+len). The owner writes index i only at i == bottom, before
//     it publishes bottom = i+1 with an atomic store; a thief reads index t
//     only after an atomic load of bottom returned more than t, so the write
//     happens before the read.
//  2. The owner writes a slot again (a later push to the same index, or the
//     clearing of a popped slot) only after a pop of that index that did not
//     need a CAS, which it does only when it saw top below the index; a thief
//     that read top == i after that sees bottom <= i unless the owner pushed i
//     again first (then the write precedes the thief's load of bottom). So no
//     thief reads a slot while the owner writes it.
//  3. An array is never reused. When bottom reaches the end of the array, the
//     owner copies the live values [top, bottom) into a fresh array, publishes
//     it with an atomic store and never writes the old one again; a thief still
//     holding the old array only reads it (its CAS on top will then fail if the
//     value was taken meanwhile). A circular array, as in Chase-Lev or HotSpot's
//     ABP queue, would let a stalled thief read a slot that the owner is
//     overwriting one lap later: harmless on hardware for a word, but a data
//     race for Go, and a torn read for a multi-word T.
//
// Clear, which zeroes every slot of the current array, is outside these rules:
// it may be called only while no thief runs.
//
// For the garbage collector the slots are ordinary typed memory: values that
// contain pointers keep their referents alive while they sit in the array, and
// some stay reachable after they have left it. Pop clears the slot it takes
// from, except when it takes the deque's last value: that Pop races with
// thieves through a CAS on top, and a losing thief may still be reading the
// slot, so it is left as is. A stolen slot cannot be cleared either (other
// thieves may still be reading it). And when the owner renews the array while
// thieves advance top, the copy may include values from below the final top,
// stale copies that nobody will return. All of these stay reachable until the
// owner next renews the array and the last thief holding the old one lets it
// go, or until Clear, which the owner may call when no thief runs.
//
// # Why the protocol is correct with Go's atomics
//
// Go's sync/atomic operations are sequentially consistent: all of them, on all
// variables, appear in one total order that respects each goroutine's program
// order, and each atomic load that observes a store is synchronized after it.
// That is the model the original Chase-Lev proof assumes. Lê, Pop, Cohen and
// Zappa Nardelli ("Correct and Efficient Work-Stealing for Weak Memory Models",
// PPoPP 2013) show which C11 orders suffice; the load-bearing ones are the
// store-load fence in Pop (the store to bottom must be ordered before the load
// of top), the fence between Steal's loads of top and bottom, and seq_cst CASes
// on top. Go's atomics give all three without explicit fences: sequential
// consistency forbids exactly the store-load and load-load reorderings that
// those fences exist to prevent.
// The arguments are written next to each operation below.
type deque[T any] struct {
	// top is the absolute index of the oldest value. Thieves advance it with
	// a CAS to claim the value at top; the owner does so only when it pops
	// the last value. It never decreases (Clear empties the deque by moving
	// bottom down to it). It has its own line: every steal
	// writes it, while the owner only reads it (once or twice per Pop).
	_   pad.Line
	top atomic.Int64
	_   [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Int64{})]byte

	// bottom is one past the newest value; only the owner stores it. Thieves
	// load it once per steal, so it stays mostly shared in their caches while
	// the owner works. arr is the current array, stored only by the owner,
	// loaded by thieves after they loaded bottom.
	bottom atomic.Int64
	arr    atomic.Pointer[slots[T]]
	_      [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Int64{}) - unsafe.Sizeof(atomic.Pointer[int]{})]byte
}

// slots is one array of a deque: index i lives at s.v[i-s.base].
type slots[T any] struct {
	base int64
	v    []T
}

// Push adds v at the bottom. Only the owner may call it.
func (d *deque[T]) Push(v T) {
	// Only the owner stores bottom and arr, so these loads read its own
	// latest stores.
	b := d.bottom.Load()
	a := d.arr.Load()
	if a == nil || b-a.base >= int64(len(a.v)) {
		a = d.grow(a, b, 1)
	}
	a.v[b-a.base] = v
	// Publish: a thief that loads bottom > b is synchronized after this
	// store, hence after the slot write above (rule 1).
	d.bottom.Store(b + 1)
}

// PushSlice adds the values of vs at the bottom, in order (vs[len(vs)-1]
// becomes the newest), publishing them to thieves with a single store: a
// cheaper way to share a batch of work than one Push per value. Only the
// owner may call it.
func (d *deque[T]) PushSlice(vs []T) {
	if len(vs) == 0 {
		return
	}
	b := d.bottom.Load()
	a := d.arr.Load()
	k := int64(len(vs))
	if a == nil || b+k-a.base > int64(len(a.v)) {
		a = d.grow(a, b, k)
	}
	copy(a.v[b-a.base:], vs)
	// One publication for the batch: a thief that loads bottom > i for any
	// index i of the batch is synchronized after all the slot writes
	// (rule 1).
	d.bottom.Store(b + k)
}

// grow copies the live values [top, b) of a into a fresh array with room for
// at least as many more values as there will be live ones after adding k, and
// publishes it. Arrays never shrink. The caller is the owner.
func (d *deque[T]) grow(a *slots[T], b, k int64) *slots[T] {
	// top may advance while we copy: values copied from below the final
	// top are stale but harmless, because a thief only reads the slot at the
	// top it loaded and then CASes from that top.
	t := d.top.Load()
	live := b - t + k // after the push
	n := int64(minSlots)
	if a != nil {
		n = int64(len(a.v))
		if 2*live <= n && n < renewSlots {
			n *= 2 // renewal by moving indices: make the next one rarer
		}
	}
	for n < 2*live {
		n *= 2
	}
	na := &slots[T]{base: t, v: make([]T, n)}
	if a != nil {
		// t >= a.base: a.base was some earlier value of top.
		copy(na.v, a.v[t-a.base:b-a.base])
	}
	// The store publishes the copied slots: a thief that loads na is
	// synchronized after the copy. The old array is never written again
	// (rule 3).
	d.arr.Store(na)
	return na
}

// Pop removes and returns the newest value. It reports false if the deque is
// empty. Only the owner may call it.
func (d *deque[T]) Pop() (v T, ok bool) {
	b := d.bottom.Load() - 1
	if d.top.Load() > b {
		// top only grows and only the owner grows bottom, so empty now
		// means empty until the owner pushes: no need to touch bottom.
		return v, false
	}
	a := d.arr.Load()
	// Reserve index b: after this store a thief that loads bottom sees b
	// and will not take index b. The store must be ordered before the load
	// of top below (the store-load order that needs a full fence on x86 and
	// arm64 in C11 terms; a Go atomic store and load are both sequentially
	// consistent, so they are).
	d.bottom.Store(b)
	t := d.top.Load()
	switch {
	case t < b:
		// At least one value lies below index b. A thief claims only the
		// index equal to the top it loaded. One that loaded top before our
		// load of top saw at most t < b. One that loads top after it loads
		// bottom after our store too, so it sees bottom == b, and if top
		// has reached b by then, it finds the deque empty. So index b is
		// ours without a CAS, and clearing the slot races with no read
		// (rule 2).
		i := b - a.base
		v = a.v[i]
		var zero T
		a.v[i] = zero
		return v, true
	case t == b:
		// The last value: thieves that loaded bottom before our store may
		// be racing for it. Whoever advances top from t wins it. The slot is
		// not cleared: a losing thief may be reading it.
		v = a.v[b-a.base]
		ok = d.top.CompareAndSwap(t, t+1)
		// Either way top is now t+1: restore bottom to match (empty).
		d.bottom.Store(t + 1)
		if !ok {
			var zero T
			return zero, false
		}
		return v, true
	default:
		// A thief took the last value between our first check and the
		// store (t == b+1): restore bottom.
		d.bottom.Store(b + 1)
		return v, false
	}
}

// Steal removes and returns the oldest value. It reports false if it found
// the deque empty. Any goroutine may call it, concurrently with the owner and
// with other thieves. A steal that loses a race for a value retries, so a
// false result means the deque was empty at some moment during the call.
func (d *deque[T]) Steal() (v T, ok bool) {
	for {
		// Load top before bottom (program order of seq-cst loads). If the
		// value at t is still unclaimed when we CAS, t < bottom held when we
		// loaded bottom, and the owner could not have popped index t
		// without a CAS (it would have seen top == t).
		t := d.top.Load()
		b := d.bottom.Load()
		if t >= b {
			return v, false
		}
		// Loaded after bottom: the array is the one index t was written to
		// or a newer copy of it (rule 1), unless the owner renewed it after
		// top passed t, which leaves t below its base.
		a := d.arr.Load()
		i := t - a.base
		if i < 0 || i >= int64(len(a.v)) {
			continue // top moved past t; the next round loads it again
		}
		v = a.v[i]
		// The claim. Success means top was still t, so no steal and no
		// last-value pop took index t since our load of top, and no other
		// caller can return it (top moved past it for good). The value read
		// is the latest one written at index t. Before our load of top the
		// owner may have popped index t without a CAS (when it saw top still
		// below t) and pushed a new value there; but that pop's store of
		// bottom = t precedes its load of top, which precedes the advance of
		// top to t and so our loads of top and bottom. Our load of bottom
		// returned more than t, so it read a later store than the pop's, and
		// after that pop only a push at index t raises bottom above t again:
		// the new value's write happens before our read (rule 1), and it is
		// that value we read and return. (Any later pop of index t needs the
		// CAS, as top is t by then, and so makes ours fail.)
		if d.top.CompareAndSwap(t, t+1) {
			return v, true
		}
		// Another thief or the owner's last-value pop won index t: someone
		// made progress. Try the new top.
	}
}

// Clear removes every value from the deque and zeroes its array, so that it
// keeps no value reachable, not even those that Pop and Steal leave behind
// (see above); the array is kept for later pushes. Unlike the other methods it
// needs a quiescent deque: only the owner may call it, and only when no Steal
// runs concurrently, with a happens-before edge from every earlier Steal and
// to every later one (for example between two runs of a worker set, or after
// an aborted phase whose copies have all returned). Len and Empty, which read
// only the indices, may run concurrently.
func (d *deque[T]) Clear() {
	a := d.arr.Load()
	if a == nil {
		return // never pushed to
	}
	// Empty the deque by moving bottom down to top rather than top up to
	// bottom: top keeps its rule (it never decreases), and the indices do
	// not move up, which would bring the next renewal closer. Zeroing the
	// whole array in place is safe only because no thief can be reading
	// it (rules 2 and 3 assume concurrent thieves; here there are none).
	d.bottom.Store(d.top.Load())
	clear(a.v)
}

// Len returns the number of values in the deque. When called by anyone but
// the owner it is a snapshot that may be stale by the time it returns.
func (d *deque[T]) Len() int {
	// Load order as in Steal: a top loaded before bottom is at most top at
	// the time of the bottom load, so the difference is at least the true
	// size at some moment; during the owner's Pop it can read one low.
	t := d.top.Load()
	b := d.bottom.Load()
	return int(max(b-t, 0))
}

// Empty reports whether Len() == 0.
func (d *deque[T]) Empty() bool { return d.Len() == 0 }
