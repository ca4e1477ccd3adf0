// Package team gives the copies of one gang-scheduled run what an OpenMP
// parallel region gives its threads: a barrier (Member.Barrier) and loops
// shared out among them (Member.For, with static, chunked, dynamic and guided
// schedules). Most programs get a team from workers.RunTeam:
//
//	w.RunTeam("solve", w.ActiveWorkers(), func(m *team.Member) {
//		for step := 0; step < steps; step++ {
//			m.For(len(next), func(lo, hi int) { relax(next[lo:hi], cur) }, team.Static())
//			if m.ID() == 0 {
//				cur, next = next, cur // every member passed For's barrier
//			}
//			m.Barrier()
//		}
//	})
//
// One run with barriers replaces a fork-join per step; the copies stay on
// their goroutines between steps.
//
// A team only works where its n members run at the same time on distinct
// goroutines, each able to wait for the others: the copies of a plain run
// (package gang states the guarantee; workers.RunTeam runs one), or
// goroutines the program starts itself. A caller-runs run cannot host a team:
// its caller may run the copies one after another. Misuse does not hang where
// it can be seen: a member that returns, panics or calls runtime.Goexit while
// others wait at a barrier (or before it reaches one they wait at), or a Run
// with a bad id, breaks the barrier, and the waiting members stop with it (Run
// recovers that and lets the first failure be reported); a Member used after
// its run panics, and so does one used on another goroutine where goroutine
// identity is cheap (amd64 and arm64).
//
// The package imports only the standard library and the module's internal
// spin policy, goroutine identity, padding unit and schedule engine (the one
// tasks/ranges' loops use).
package team

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/pad"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/tasks"
)

// The barrier word: broken<<63 | departed<<62 | epoch<<32 | arrived.
const (
	arrivedMask = 1<<32 - 1
	epochShift  = 32
	epochMask   = 1<<30 - 1
	departedBit = 1 << 62
	brokenBit   = 1 << 63
)

// Team is the shared state of n members: one barrier and one worksharing
// loop at a time. Create one with New; a Team is run once (Run for each id,
// each on its own goroutine) and may then be Reset for another run. A Team
// must not be copied.
type Team struct {
	// bar is the barrier word. Every member's arrival is one Add; the last
	// arriver of an episode stores the next epoch with the count at 0. The
	// Add chain orders every arrival before the last one, and the store of
	// the next epoch, which every waiter loads before it leaves, orders the
	// last arrival before every departure: each member's writes before a
	// Barrier happen before every member's code after it.
	bar atomic.Uint64
	_   [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Uint64{})]byte

	// next is the current loop's claim counter (a chunk index for dynamic
	// schedules, an iteration for guided ones). It is reset by the last
	// arriver of the barrier that ends each loop, before it releases the
	// others, so the next loop starts from 0 (see For).
	next atomic.Uint64
	_    [uintptr(pad.CacheLine) - unsafe.Sizeof(atomic.Uint64{})]byte

	// The slow path: waiters that spun for their budget sleep on cond.
	// sleepers counts them; it is the Dekker partner of bar (a sleeper
	// increments it, then loads bar; a releaser stores bar, then loads it),
	// so a releaser that sees 0 knows every sleeper will see the new epoch.
	mu       sync.Mutex
	cond     sync.Cond
	sleepers atomic.Int32
	// failed and departed are the ids (+1) of the first member that
	// panicked or called Goexit, and of the first that returned: what a
	// stopped barrier names.
	failed, departed atomic.Int32
	// reported is set by the one member that panics for a departed member;
	// the others stop as for a broken barrier.
	reported atomic.Bool
	_        pad.Line // keeps the read-mostly fields off the sleepers' line

	// Read-mostly after New or Reset.
	n       int
	budget  time.Duration
	members []Member
}

// Member is one copy's view of its team, handed to the function Run runs.
// Its methods must be called only by the goroutine running that copy, during
// the run.
type Member struct {
	member
	_ [uintptr(pad.CacheLine) - unsafe.Sizeof(member{})]byte // a Member is one whole line: layout_test.go checks
}

// member is a Member's state.
type member struct {
	t  *Team
	id int
	// live is true while Run runs this member's function: a Member kept
	// past its run (and reused by a later one only once Run sets it again)
	// is refused by check.
	live atomic.Bool
	// g is the goroutine running it (0 where goid is slow, and between
	// runs). Atomic because a Member kept past its run may be used, wrongly,
	// by another goroutine while Reset or Run writes it: check must then
	// refuse it, not race.
	g atomic.Uint64
}

// New returns a team of n members, ids 0..n-1. It panics if n is outside
// [1, tasks.MaxCopies].
func New(n int) *Team {
	t := &Team{}
	t.cond.L = &t.mu
	t.Reset(n)
	return t
}

// Reset prepares t for another run of n members. It must not be called while
// a run of t is in progress. A *Member of an earlier run panics when used
// outside a run; it is the same object as the new run's member of its id,
// so do not keep one past its run. It panics if n is outside [1, tasks.MaxCopies].
func (t *Team) Reset(n int) {
	if n < 1 || n > tasks.MaxCopies {
		panic(fmt.Sprintf("team: n = %d out of range [1, %d]", n, tasks.MaxCopies))
	}
	t.n = n
	t.budget = spin.Budget()
	t.bar.Store(0)
	t.next.Store(0)
	t.failed.Store(0)
	t.departed.Store(0)
	t.reported.Store(false)
	if cap(t.members) < n {
		t.members = make([]Member, n)
	}
	t.members = t.members[:n]
	for i := range t.members {
		m := &t.members[i]
		m.t, m.id = t, i
		m.g.Store(0)
	}
}

// Run runs fn as member id on the calling goroutine and returns when fn
// returns. Each id in [0, n) must be run exactly once per run, each on a
// goroutine of its own, all at the same time (a plain run's copies do).
//
// If fn panics or calls runtime.Goexit, the barrier breaks: members waiting
// at it, or arriving later, stop with a panic that Run recovers (it returns
// normally for them), so that the run reports only the first failure, which
// Run lets go on (the panic or the Goexit proceeds). A member that returns
// normally while others wait at a barrier it never reached also breaks it:
// the first of the others to see it panics with a message naming it, and the
// rest stop as for a broken barrier. A bad id, a nil fn or an id already
// running panics after breaking the barrier.
func (t *Team) Run(id int, fn func(m *Member)) {
	// Misuse panics, but first breaks the barrier: the other members must
	// not wait for good for a member that will never arrive (a run reports
	// a panic only once every copy returned).
	if id < 0 || id >= t.n {
		t.breakBarrier(id)
		panic(fmt.Sprintf("team: Run: id = %d out of range [0, %d)", id, t.n))
	}
	if fn == nil {
		t.breakBarrier(id)
		panic("team: Run: nil function")
	}
	m := &t.members[id]
	if m.live.Swap(true) {
		t.breakBarrier(id)
		panic(fmt.Sprintf("team: Run: member %d is already running", id))
	}
	if goid.Fast {
		m.g.Store(goid.Get())
	}
	normal := false
	defer func() {
		m.live.Store(false)
		if normal {
			t.depart(id)
			return
		}
		if v := recover(); v != nil {
			if _, ok := v.(brokenBarrier); ok {
				return // another member's failure, reported by its own copy
			}
			t.breakBarrier(id)
			panic(v) // re-raised with the original value; the stack is the runtime's
		}
		// A Goexit or a panic(nil) under GODEBUG=panicnil=1: break, and let
		// the Goexit go on.
		t.breakBarrier(id)
	}()
	fn(m)
	normal = true
}

// ID returns the member's id in [0, n), n the team's size.
func (m *Member) ID() int { return m.id }

// brokenBarrier is the panic value of a member stopped because another one
// failed; Run recovers it.
type brokenBarrier struct{ msg string }

func (b brokenBarrier) Error() string { return b.msg }

// Barrier returns once every member of the team called it (the same number
// of times): every member's writes before its call happen before every
// member's return from it. A waiting member spins for a bounded time (the
// module's spin policy, shorter when the members outnumber GOMAXPROCS), then
// sleeps.
func (m *Member) Barrier() { m.barrier(nil) }

// check panics for a Member used outside its run or its goroutine.
func (m *Member) check(op string) *Team {
	t := m.t
	if t == nil || !m.live.Load() {
		panic(fmt.Sprintf("team: %s of member %d after its run", op, m.id))
	}
	if g := m.g.Load(); goid.Fast && g != 0 && goid.Get() != g {
		panic(fmt.Sprintf("team: %s of member %d called from another goroutine than the one running it", op, m.id))
	}
	return t
}

// barrier waits for every member; the last to arrive runs last (if not nil)
// before it releases the others.
func (m *Member) barrier(last func()) {
	t := m.check("Barrier")
	w := t.bar.Add(1)
	if w&(brokenBit|departedBit) != 0 {
		t.stop(w)
	}
	epoch := w >> epochShift & epochMask
	if int(w&arrivedMask) == t.n {
		if last != nil {
			last()
		}
		// Release: the next epoch, nobody arrived yet. A concurrent Or of a
		// broken or departed bit cannot come in between: every member has
		// arrived and none has left.
		t.bar.Store((epoch + 1) & epochMask << epochShift)
		if t.sleepers.Load() != 0 {
			t.wakeAll()
		}
		return
	}
	passed := func() bool { return t.bar.Load()>>epochShift&epochMask != epoch }
	ended := func() bool {
		w := t.bar.Load()
		return w>>epochShift&epochMask != epoch || w&(brokenBit|departedBit) != 0
	}
	if !spin.Until(t.budget, ended) {
		t.mu.Lock()
		// Announce, then re-check: the Dekker pair of the releaser's store
		// and load of sleepers (and of breakBarrier's and depart's).
		t.sleepers.Add(1)
		for !ended() {
			t.cond.Wait()
		}
		t.sleepers.Add(-1)
		t.mu.Unlock()
	}
	if !passed() {
		t.stop(t.bar.Load())
	}
}

// stop panics for a barrier that cannot complete.
func (t *Team) stop(w uint64) {
	if w&brokenBit != 0 {
		panic(brokenBarrier{fmt.Sprintf("team: barrier broken: member %d panicked or called runtime.Goexit", t.failed.Load()-1)})
	}
	msg := fmt.Sprintf("team: Barrier: member %d returned without reaching the barrier the others wait at; every member must call Barrier (and For) the same number of times", t.departed.Load()-1)
	if t.reported.CompareAndSwap(false, true) {
		panic(msg) // the one report; Run breaks the barrier for the rest
	}
	panic(brokenBarrier{msg})
}

// breakBarrier marks the barrier broken by member id and wakes every sleeper.
func (t *Team) breakBarrier(id int) {
	t.failed.CompareAndSwap(0, int32(id+1))
	t.bar.Or(brokenBit)
	if t.sleepers.Load() != 0 {
		t.wakeAll()
	}
}

// depart records that member id returned. A barrier that some member still
// waits at (or reaches later) then cannot complete: the departed bit makes
// it stop instead of waiting for good. When every member passed every
// barrier, as in a correct program, nobody looks at the bit again.
func (t *Team) depart(id int) {
	if t.n == 1 {
		return
	}
	t.departed.CompareAndSwap(0, int32(id+1))
	t.bar.Or(departedBit)
	if t.sleepers.Load() != 0 {
		t.wakeAll()
	}
}

func (t *Team) wakeAll() {
	t.mu.Lock()
	t.cond.Broadcast()
	t.mu.Unlock()
}
