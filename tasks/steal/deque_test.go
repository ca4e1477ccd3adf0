package steal

import (
	"flag"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/race"
)

var long = flag.Bool("long", false, "run the stress tests for longer")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scale returns short normally, long with -long, and a quarter of short with
// -short; all three are ten times larger without the race detector.
func scale(short, long_ int) int {
	n := short
	switch {
	case *long:
		n = long_
	case testing.Short():
		n = max(1, short/4)
	}
	if !race.Enabled {
		n *= 10
	}
	return n
}

// TestDequeSequential checks single-goroutine behaviour against a model: the
// bottom is LIFO for Pop, the top FIFO for Steal.
func TestDequeSequential(t *testing.T) {
	type op struct {
		kind byte // 'u' push, 'o' pop, 's' steal
		v    int  // pushed value
	}
	push := func(v int) op { return op{'u', v} }
	pop, stl := op{kind: 'o'}, op{kind: 's'}
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"empty pop and steal", []op{pop, stl}},
		{"lifo", []op{push(1), push(2), push(3), pop, pop, pop, pop}},
		{"fifo", []op{push(1), push(2), push(3), stl, stl, stl, stl}},
		{"mixed", []op{push(1), push(2), stl, push(3), pop, pop, push(4), stl, pop}},
		{"last value", []op{push(1), pop, push(2), stl, push(3), pop, stl, pop}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d deque[int]
			var model []int
			for i, o := range tc.ops {
				switch o.kind {
				case 'u':
					d.Push(o.v)
					model = append(model, o.v)
				case 'o':
					got, ok := d.Pop()
					if len(model) == 0 {
						require.False(t, ok, "op %d: Pop on empty = %d", i, got)
						continue
					}
					want := model[len(model)-1]
					model = model[:len(model)-1]
					require.True(t, ok, "op %d", i)
					require.Equal(t, want, got, "op %d: Pop", i)
				case 's':
					got, ok := d.Steal()
					if len(model) == 0 {
						require.False(t, ok, "op %d: Steal on empty = %d", i, got)
						continue
					}
					want := model[0]
					model = model[1:]
					require.True(t, ok, "op %d", i)
					require.Equal(t, want, got, "op %d: Steal", i)
				}
				require.Equal(t, len(model), d.Len(), "op %d: Len", i)
			}
		})
	}
}

// TestDequeGrowth pushes well past the first array with steals in between,
// so that arrays are renewed with live values at an offset, and checks the
// order of everything against the model.
func TestDequeGrowth(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n, stealEach int
	}{
		{"push only", 1000, 0},
		{"steal every 3rd", 5000, 3},
		{"steal every push", 5000, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d deque[int]
			var model []int
			for i := range tc.n {
				d.Push(i)
				model = append(model, i)
				if tc.stealEach > 0 && i%tc.stealEach == 0 {
					v, ok := d.Steal()
					require.True(t, ok)
					require.Equal(t, model[0], v)
					model = model[1:]
				}
			}
			require.Equal(t, len(model), d.Len())
			for len(model) > 0 {
				v, ok := d.Pop()
				require.True(t, ok)
				require.Equal(t, model[len(model)-1], v)
				model = model[:len(model)-1]
			}
			_, ok := d.Pop()
			require.False(t, ok)
			assert.True(t, d.Empty())
		})
	}
}

func TestDequePushSlice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  int // values pushed one by one first
		batches []int
	}{
		{"empty batch", 0, []int{0}},
		{"one batch", 0, []int{5}},
		{"batches past the first array", 3, []int{40, 100, 1, 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d deque[int]
			var model []int
			next := 0
			for range tc.before {
				d.Push(next)
				model = append(model, next)
				next++
			}
			for _, k := range tc.batches {
				vs := make([]int, k)
				for i := range vs {
					vs[i] = next
					next++
				}
				d.PushSlice(vs)
				model = append(model, vs...)
				// Steal one to move indices, as thieves would.
				if len(model) > 0 {
					v, ok := d.Steal()
					require.True(t, ok)
					require.Equal(t, model[0], v)
					model = model[1:]
				}
			}
			require.Equal(t, len(model), d.Len())
			for i := len(model) - 1; i >= 0; i-- {
				v, ok := d.Pop()
				require.True(t, ok)
				require.Equal(t, model[i], v)
			}
			_, ok := d.Pop()
			require.False(t, ok)
		})
	}
}

// TestDequeHoldsAnyType stores multi-word values: a torn read would show up
// as a mismatched pair.
func TestDequeHoldsAnyType(t *testing.T) {
	type pair struct {
		s string
		n int
		p *int
	}
	var d deque[pair]
	x := 7
	d.Push(pair{"a", 1, &x})
	d.Push(pair{"b", 2, nil})
	v, ok := d.Steal()
	require.True(t, ok)
	assert.Equal(t, pair{"a", 1, &x}, v)
	v, ok = d.Pop()
	require.True(t, ok)
	assert.Equal(t, pair{"b", 2, nil}, v)
}

// TestDequeLinearizable runs one owner against several thieves and checks
// what a linearizable deque implies:
//   - every pushed value is taken exactly once, by Pop or Steal;
//   - each thief sees increasing values (values are pushed in increasing
//     order and Steal takes the oldest);
//   - each Pop returns the newest value the owner pushed and has not popped
//     (a thief can only take values older than any the owner still has
//     unless it took them all): the owner checks this against its own
//     stack of pushes.
//
// The owner alternates bursts of pushes (one by one or as a PushSlice batch)
// and pops of random sizes, so the
// deque is often empty or holds one value (the contested cases) and sometimes
// grows past its first array.
func TestDequeLinearizable(t *testing.T) {
	rounds := scale(40, 400)
	const thieves = 2
	stolenTotal := 0
	defer func() {
		// Not an assertion on timing: a run where thieves never got a value
		// would test nothing, so say so.
		if stolenTotal == 0 && !t.Failed() {
			t.Error("thieves stole nothing in any round; the test exercised no concurrency")
		}
		t.Logf("%d rounds, %d values stolen", rounds, stolenTotal)
	}()
	for round := range rounds {
		n := 2000 + 37*round
		var d deque[int]
		taken := make([]atomic.Int32, n)
		var stop atomic.Bool
		var wg, ready sync.WaitGroup
		stolen := make([][]int, thieves)
		for th := range thieves {
			wg.Add(1)
			ready.Add(1)
			go func() {
				defer wg.Done()
				ready.Done()
				for {
					v, ok := d.Steal()
					if ok {
						stolen[th] = append(stolen[th], v)
						taken[v].Add(1)
						continue
					}
					if stop.Load() {
						return
					}
					runtime.Gosched()
				}
			}()
		}

		rng := uint64(round + 1)
		next := func(k uint64) int { // xorshift, small random numbers
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			return int(rng % k)
		}
		var stack []int // values the owner pushed and has not popped
		var batch []int
		popped := 0
		ready.Wait() // thieves are running: the owner must meet them
		for v := 0; v < n; {
			if next(4) == 0 {
				runtime.Gosched() // let a thief in while values are present
			}
			if next(3) == 0 {
				// A batch, published with one store.
				k := min(1+next(16), n-v)
				batch = batch[:0]
				for range k {
					batch = append(batch, v)
					v++
				}
				d.PushSlice(batch)
				stack = append(stack, batch...)
			} else {
				for range 1 + next(8) {
					if v == n {
						break
					}
					d.Push(v)
					stack = append(stack, v)
					v++
				}
			}
			for range next(8) {
				got, ok := d.Pop()
				if !ok {
					break
				}
				// got must be the top of the owner's stack: the values
				// above it were popped by the owner, and a thief could
				// not have taken them while older ones were present.
				want := stack[len(stack)-1]
				if got != want {
					t.Fatalf("round %d: Pop = %d; want %d (newest not yet popped)", round, got, want)
				}
				stack = stack[:len(stack)-1]
				taken[got].Add(1)
				popped++
			}
		}
		for {
			got, ok := d.Pop()
			if !ok {
				break
			}
			want := stack[len(stack)-1]
			require.Equal(t, want, got, "round %d: final Pop", round)
			stack = stack[:len(stack)-1]
			taken[got].Add(1)
			popped++
		}
		stop.Store(true)
		wg.Wait()

		total := popped
		for th, seq := range stolen {
			total += len(seq)
			for i := 1; i < len(seq); i++ {
				if seq[i] <= seq[i-1] {
					t.Fatalf("round %d: thief %d stole %d after %d; want FIFO (increasing)", round, th, seq[i], seq[i-1])
				}
			}
		}
		for v := range taken {
			if c := taken[v].Load(); c != 1 {
				t.Fatalf("round %d: value %d taken %d times; want 1", round, v, c)
			}
		}
		require.Equal(t, n, total, "round %d", round)
		stolenTotal += total - popped
	}
}

// TestDequeLastValueRace aims at the one case where the owner and thieves
// compete for the same value: the deque holds a single value, the owner pops
// it while thieves steal it. Each value must go to exactly one of them.
func TestDequeLastValueRace(t *testing.T) {
	n := scale(20000, 400000)
	const thieves = 2
	var d deque[int]
	taken := make([]atomic.Int32, n)
	var stop atomic.Bool
	var wg, ready sync.WaitGroup
	var stolen atomic.Int64
	for range thieves {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			for spins := 0; !stop.Load(); spins++ {
				if v, ok := d.Steal(); ok {
					taken[v].Add(1)
					stolen.Add(1)
				} else if spins%64 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	ready.Wait()
	for v := range n {
		d.Push(v)
		// Leave a gap of varying length so that thieves find the value at
		// every point of the owner's Pop: before, during and after; now
		// and then a yield, so that they run at GOMAXPROCS 1 too.
		for range (v * 7919) % 512 {
			if d.Empty() {
				break
			}
		}
		if v%256 == 0 {
			runtime.Gosched()
		}
		if got, ok := d.Pop(); ok {
			if got != v {
				t.Fatalf("Pop = %d; want %d", got, v)
			}
			taken[got].Add(1)
		}
	}
	stop.Store(true)
	wg.Wait()
	for v := range taken {
		if c := taken[v].Load(); c != 1 {
			t.Fatalf("value %d taken %d times; want 1", v, c)
		}
	}
	if stolen.Load() == 0 {
		t.Error("thieves stole nothing; the test exercised no race")
	}
	t.Logf("%d values, %d stolen", n, stolen.Load())
}

// TestDequeOwnerHandoff passes ownership between goroutines (with a
// happens-before edge, as a worker set does between runs).
func TestDequeOwnerHandoff(t *testing.T) {
	var d deque[int]
	for i := range 3 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			d.Push(i)
		}()
		<-done
	}
	v, ok := d.Pop()
	require.True(t, ok)
	assert.Equal(t, 2, v)
}

// gcObj is big enough to get an allocation of its own (no tiny-allocator
// block shared with other objects), so a weak pointer to it goes nil as soon
// as it is unreachable.
type gcObj struct {
	//lint:ignore U1000 never read: it makes the object a pointer-holding one
	p *int
	//lint:ignore U1000 never read: it sizes the object
	pad [64]byte
}

// pushPopObj pushes a fresh object (above another one unless last) and pops
// it, returning a weak pointer to it. Not inlined, so that no strong pointer
// to the object survives in the caller's frame.
//
//go:noinline
func pushPopObj(d *deque[*gcObj], last bool) weak.Pointer[gcObj] {
	if !last {
		d.Push(&gcObj{}) // one value below: the pop below is not the last
	}
	p := &gcObj{}
	wp := weak.Make(p)
	d.Push(p)
	if got, ok := d.Pop(); !ok || got != p {
		panic("pushPopObj: Pop did not return the pushed value")
	}
	return wp
}

// TestDequeLastValuePopKeepsValueReachable pins what the deque doc says about
// the garbage collector: a Pop from below another value clears its slot, but
// a Pop that takes the deque's last value (the CAS path) leaves the slot set
// (a losing thief may be reading it), so the value stays reachable from the
// deque; Clear releases it.
func TestDequeLastValuePopKeepsValueReachable(t *testing.T) {
	var notLast, last deque[*gcObj]
	wCleared := pushPopObj(&notLast, false)
	wKept := pushPopObj(&last, true)
	runtime.GC()
	runtime.GC()
	assert.Nil(t, wCleared.Value(), "value popped from below another one is still reachable; want its slot cleared")
	assert.NotNil(t, wKept.Value(), "last value popped is unreachable: the slot was cleared, update the deque doc and this test")

	last.Clear()
	runtime.GC()
	runtime.GC()
	assert.Nil(t, wKept.Value(), "last value popped is still reachable after Clear")
	runtime.KeepAlive(&notLast)
	runtime.KeepAlive(&last)
}

// TestDequeClear empties deques in various states (never used, live values,
// values taken from both ends, past a renewal) and checks that they behave as
// empty deques afterwards, keeping their order for new values.
func TestDequeClear(t *testing.T) {
	for _, tc := range []struct {
		name         string
		push         int
		pops, steals int
	}{
		{"never used", 0, 0, 0},
		{"live values", 10, 0, 0},
		{"popped and stolen", 10, 3, 3},
		{"emptied by the last-value pop", 1, 1, 0},
		{"past a renewal", 5000, 10, 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d deque[int]
			for i := range tc.push {
				d.Push(i)
			}
			for range tc.pops {
				_, ok := d.Pop()
				require.True(t, ok)
			}
			for range tc.steals {
				_, ok := d.Steal()
				require.True(t, ok)
			}
			d.Clear()
			assert.True(t, d.Empty())
			_, ok := d.Pop()
			assert.False(t, ok, "Pop after Clear")
			_, ok = d.Steal()
			assert.False(t, ok, "Steal after Clear")
			d.Clear() // idempotent
			for i := range 100 {
				d.Push(1000 + i)
			}
			v, ok := d.Steal()
			require.True(t, ok)
			assert.Equal(t, 1000, v, "oldest value after Clear")
			v, ok = d.Pop()
			require.True(t, ok)
			assert.Equal(t, 1099, v, "newest value after Clear")
			assert.Equal(t, 98, d.Len())
		})
	}
}
