package gang

import (
	"runtime"
	"time"

	"github.com/workgang/workgang/internal/spin"
)

// Serve runs worker i: it waits for runs and executes the copies they have
// for it until Stop, then returns. If a copy calls runtime.Goexit, the copy
// is accounted for (and reported to Run) before the goroutine exits; the
// owner of the goroutine should start a replacement calling Serve(i), which
// resumes where the old one stopped.
func (d *Dispatcher) Serve(i int) {
	s := &d.slots[i]
	for {
		r, gen := d.next(s)
		s.seen = gen
		if r&stopBit != 0 {
			return
		}
		n := int(r & nMask)
		m := n
		if r&callerBit != 0 {
			m--
		}
		if s.procsAge%procsEvery == 0 {
			s.procs = int32(runtime.GOMAXPROCS(0))
			d.noteProcs(s.procs)
		}
		s.procsAge++
		// The hand-back at the end (see retire): only in a plain run whose
		// workers and coordinator outnumber the processors, where the
		// coordinator may be queued behind this worker.
		handBack := r&callerBit == 0 && m+1 > int(s.procs)
		// Wake this worker's children in the tree before running anything:
		// the wake-ups go out in parallel with the copies.
		if c := 2*i + 2; c < m {
			woke := d.wakeFor(c, m)
			if c+1 < m && d.wakeFor(c+1, m) {
				woke = true
			}
			if woke {
				d.lure()
			}
		}
		if i < m {
			// Needed: spin at full budget after this run, even if the
			// caller took this copy first (a worker that loses such races
			// is still the one the next run will want).
			s.misses = 0
			if d.claim(i, gen) {
				s.copies.Add(1)
				d.execute(d.task, i, n, gen, false, handBack)
			}
			// Then take the next few copies their workers have not started:
			// a worker that is awake but not running (its processor is
			// busy, as when the workers and the coordinator outnumber
			// GOMAXPROCS) would otherwise hold up the run. A bounded look,
			// so large runs do not make every worker read every slot.
			for k := 1; k <= stealAhead && k < m; k++ {
				if c := (i + k) % m; d.claim(c, gen) {
					s.copies.Add(1)
					d.execute(d.task, c, n, gen, false, handBack)
				}
			}
			continue
		}
		// A surplus worker that is awake takes copies whose workers are
		// parked, still waking up or running side copies: they are the
		// ones the run would wait for.
		helped := false
		for c := range m {
			if d.slots[c].state.Load() != awake && d.claim(c, gen) {
				s.copies.Add(1)
				d.execute(d.task, c, n, gen, false, handBack)
				helped = true
			}
		}
		if helped {
			s.misses = 0
		} else if s.misses < 2 {
			s.misses++
		}
	}
}

// next waits for a run word newer than the last one the worker acted on and
// returns it with its full generation. Meanwhile the worker serves the side
// slot (side.go); a fresh run word always comes first.
func (d *Dispatcher) next(s *slot) (r, gen uint64) {
	for {
		if d.fresh(s) {
			s.ready.Add(1)
			return d.snapshot()
		}
		if d.sideOpen() {
			d.serveSide(s)
			continue
		}
		budget := d.idleBudget(s)
		if budget > 0 {
			if spin.Until(budget, &s.spin, func() bool { return d.fresh(s) || d.sideOpen() }) {
				if d.fresh(s) {
					s.spun.Add(1)
					return d.snapshot()
				}
				continue // the side slot, served above
			}
		}
		if r, gen, ok := d.sleep(s, budget); ok {
			return r, gen
		}
	}
}

// sleep parks worker s until the run word is newer than s.seen (ok, with the
// run word) or the side slot has copies to claim (not ok). A waker acting on
// an old run word (a slow parent) may wake the worker with nothing new to
// do: it parks again then.
func (d *Dispatcher) sleep(s *slot, budget time.Duration) (r, gen uint64, ok bool) {
	for {
		var parkedAt time.Time
		if budget > 0 {
			parkedAt = time.Now() // the slow path: about to block anyway
		}
		slept := d.park(s)
		if slept && budget > 0 && s.misses == 0 {
			d.learn(s, time.Since(parkedAt), budget)
		}
		if d.fresh(s) {
			r, gen = d.snapshot()
			return r, gen, true
		}
		if d.sideOpen() {
			return 0, 0, false
		}
	}
}

// maxBoost bounds how far learn stretches a worker's full budget: 2^4 times
// the set's budget, and never past maxLearned.
const (
	maxBoost   = 4
	maxLearned = time.Millisecond
)

// learn adapts worker s's full budget to the gaps between the runs that
// need it: a worker woken less than 4 budgets after it parked would have
// saved the wake-up (microseconds, on the run's critical path) by spinning a
// little longer, so its budget doubles; one that slept 32 budgets or more
// halves it again. A phase sequence with a steady gap a little longer than
// the budget (a collector's pauses between mutator slices) so keeps its
// workers awake across the gap; an idle set still parks, after at most
// maxLearned. The pause scenario of the perf harness is the benchmark behind
// it (docs/perf.md).
func (d *Dispatcher) learn(s *slot, slept, budget time.Duration) {
	switch {
	case slept < 4*budget && s.boost < maxBoost && 2*budget <= maxLearned:
		s.boost++
	case slept >= 32*budget && s.boost > 0:
		s.boost--
	}
}

// fresh reports whether the run word is newer than the last one worker s
// acted on: the poll of an idle worker, one load of a line that stays
// shared until the next run.
func (d *Dispatcher) fresh(s *slot) bool {
	return genOf(d.run.Load()) != s.seen&genMask
}

// idleBudget is how long worker s spins for the next run: the full budget
// (the set's, stretched by learn) if the last run it saw needed it, an
// eighth of the set's after one run without, none after two (it parks at
// once and costs nothing until a run needs it).
func (d *Dispatcher) idleBudget(s *slot) time.Duration {
	switch s.misses {
	case 0:
		return time.Duration(d.idleSpin.Load()) << s.boost
	case 1:
		return time.Duration(d.idleSpin.Load()) / 8
	default:
		return 0
	}
}

// park commits worker s to block, re-checks the run word and the side slot,
// and blocks on its semaphore until a waker signals it. See wakeIfParked for
// the pairing. On return the run word is usually newer than s.seen, or the
// side slot open (not always: see sleep).
// It reports whether the worker slept (blocked until a waker's permit).
func (d *Dispatcher) park(s *slot) (slept bool) {
	s.parks.Add(1)
	s.state.Store(parked)
	if d.fresh(s) || d.sideOpen() {
		// A run arrived between the spin and the commit, or a side run
		// (whose holder stores its word, then looks for parked workers to
		// wake, so the same pairing holds). Withdraw; if a waker got there
		// first, it owes (and signals) a permit: take it so the semaphore is
		// empty for the next park.
		if !s.state.CompareAndSwap(parked, awake) {
			s.wake.Wait()
			s.state.Store(awake)
		}
		return false
	}
	// The waker stored the run word before its CAS to waking and its
	// Signal; the Signal is synchronized before the return of the Wait that
	// takes its permit (package semaphore), so the run is visible.
	s.wake.Wait()
	s.wakeups.Add(1)
	s.state.Store(awake)
	return true
}
