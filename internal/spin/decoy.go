package spin

import "sync/atomic"

// The decoy (hint Lure). Go's scheduler puts a goroutine readied by another
// one (a semaphore's Signal, a channel send) in the readier's runnext slot:
// it runs on the readier's processor when the readier blocks or yields. An
// idle processor woken for it takes a goroutine from another processor's
// ordinary run queue at once, but from its runnext slot only after a pause
// (the runtime asks for 3 us; Linux timer slack makes it tens). A waker that
// runs on after its wake-ups (a caller-runs caller claiming copies, a worker
// waking its children in the wake tree before its own copy) so keeps the
// woken worker off every processor, and a run shorter than that pause ends
// on the waker alone. That is every run of a process whose other goroutines
// let the idle workers park between runs.
//
// A Decoy is a goroutine that waits on an unbuffered channel. Right after
// its wake-ups a waker readies it too (Lure): the decoy takes runnext and
// pushes the worker readied last into the run queue, where the woken
// processor takes it at once. The decoy runs later on the waker's processor,
// receives, and blocks again. It touches no state of the protocol: a lure
// that finds it busy, unserved or stopped does nothing, and the worker
// waits in runnext as it would without it.

// A Decoy is the decoy of one dispatcher. Make it with NewDecoy; a Decoy
// must not be copied.
type Decoy struct {
	// ch is unbuffered, so a lure's non-blocking send succeeds only while
	// the decoy waits in its receive: the case in which the send readies
	// it into the waker's runnext.
	ch   chan struct{}
	stop chan struct{} // closed once, by the first Stop
	// stopped makes Stop idempotent: only the CAS's winner closes stop.
	stopped atomic.Bool
	lured   atomic.Uint64 // lures received; written by the decoy only
}

// NewDecoy returns a decoy nobody serves yet.
func NewDecoy() *Decoy { return &Decoy{ch: make(chan struct{}), stop: make(chan struct{})} }

// Serve runs the decoy until Stop; at most one goroutine serves it.
func (d *Decoy) Serve() {
	for {
		select {
		case <-d.ch:
			d.lured.Add(1)
		case <-d.stop:
			return
		}
	}
}

// Stop makes Serve return, now or when it is called; later calls do nothing.
func (d *Decoy) Stop() {
	if d.stopped.CompareAndSwap(false, true) {
		close(d.stop)
	}
}

// Lured reports how many lures the decoy received (tests).
func (d *Decoy) Lured() uint64 { return d.lured.Load() }

// Lure readies the decoy if it waits (hint Lure, and more than one
// processor: with one, no other processor could take the worker, and the
// lure would only add a switch). Call it after the last wake-up of a waker
// that runs on: a later wake-up would take runnext back. A non-blocking send
// on an unbuffered channel with no receiver fails without taking a lock.
func (d *Decoy) Lure() {
	if !On(Lure) {
		return
	}
	if procsSeen() <= 1 {
		return
	}
	select {
	case d.ch <- struct{}{}:
	default:
	}
}
