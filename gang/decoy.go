package gang

import (
	"sync/atomic"
)

// The decoy. Go's scheduler puts a goroutine readied by another one (a
// channel send, as the Signal of a worker's semaphore is) in the readier's
// runnext slot: it runs on the readier's processor as soon as the readier
// blocks or yields. An idle processor woken for it may take it from there
// only after a pause the runtime means to last 3 us, which timer slack
// stretches to about 60 us on Linux; goroutines in the ordinary run queue it
// takes at once. A waker that keeps running after the wake-up (a caller-runs
// caller that claims copies, a worker that wakes its children in the tree and
// then runs its own copy) would so keep the woken worker off every processor
// for tens of microseconds, and a run shorter than that would end on its
// caller alone: in a process whose other goroutines let the workers park
// between runs, every run.
//
// The decoy is a goroutine of the embedder's (ServeDecoy) that waits on an
// unbuffered channel. Right after waking workers, a waker readies it too
// (lure): the decoy takes runnext, which pushes the worker readied last into
// the run queue, where the woken processor takes it. The decoy itself runs
// later on the waker's processor (a receive, and it blocks again) when the
// waker blocks or yields.
//
// It carries no data and touches no state of the protocol: a lure that finds
// the decoy not waiting (it is queued already, or nobody serves it) does
// nothing, and the worker waits in runnext as it would without a decoy. The
// SPIN model therefore has no decoy.

// decoy is the decoy's state. Written on wake-ups (the slow path) and by the
// decoy itself, so it has a line of its own, away from the run's lines.
type decoy struct {
	_ [cacheLine]byte
	// ch is the decoy's channel: unbuffered, so a lure's non-blocking send
	// succeeds only when the decoy waits in its receive, the case in which
	// the send readies it into the waker's runnext.
	ch chan struct{}
	// done is closed by Stop (once: stopped) to end ServeDecoy.
	done    chan struct{}
	stopped atomic.Bool
	// multiP is whether GOMAXPROCS was above 1 when last read by one of the
	// dispatcher's goroutines (they re-read it every procsEvery runs). With
	// one processor there is no other processor to take a woken worker, and
	// a lure would only add a switch to the decoy. A hint: when GOMAXPROCS
	// changes, wakers may lure wrongly, or not lure, until the next re-read.
	multiP atomic.Bool
	// lured counts the lures the decoy received; its only writer is the
	// decoy.
	lured atomic.Uint64
}

// ServeDecoy runs the dispatcher's decoy (see decoy.go) until Stop; it must
// be called by at most one goroutine at a time. Serving it is optional:
// without it, a worker woken by a goroutine that keeps running waits in that
// goroutine's runnext slot until it blocks or yields, or until another
// processor takes the worker (tens of microseconds later). Package workers
// serves it from its own goroutine for as long as the set has workers.
func (d *Dispatcher) ServeDecoy() {
	dc := &d.decoy
	for {
		select {
		case <-dc.ch:
			dc.lured.Add(1)
		case <-dc.done:
			return
		}
	}
}

// Lured reports how many times a waker readied the decoy: wake-ups after
// which the woken worker was left in the run queue instead of the waker's
// runnext slot.
func (d *Dispatcher) Lured() uint64 { return d.decoy.lured.Load() }

// lure readies the decoy if it waits, after the caller signalled one or more
// parked workers and before it runs on: see decoy.go. It must come after the
// last Signal of the caller's wake-ups, since a later Signal would take
// runnext back. The non-blocking send of an unbuffered channel fails without
// a lock when no receiver waits.
func (d *Dispatcher) lure() {
	if !d.decoy.multiP.Load() {
		return
	}
	select {
	case d.decoy.ch <- struct{}{}:
	default:
	}
}

// noteProcs records GOMAXPROCS as a dispatcher goroutine just read it. It
// writes only on change, so the line stays shared between wake-ups.
func (d *Dispatcher) noteProcs(procs int32) {
	if multi := procs > 1; d.decoy.multiP.Load() != multi {
		d.decoy.multiP.Store(multi)
	}
}

// stopDecoy ends ServeDecoy (Stop); later calls do nothing.
func (d *Dispatcher) stopDecoy() {
	if d.decoy.stopped.CompareAndSwap(false, true) {
		close(d.decoy.done)
	}
}
