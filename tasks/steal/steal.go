// Package steal is an advanced building block, for runtimes whose parallel
// phases discover their work as they go, such as a collector's mark (work
// known up front wants workers.ForRange): work stealing for the copies of a
// phase, with a per-worker deque, a set of deques with randomized victim
// selection, and a terminator that tells the workers when every deque has
// run dry for good.
//
// The shape is the one of a tracing garbage collector's mark phase (HotSpot's
// GenericTaskQueue, GenericTaskQueueSet and TaskTerminator): each worker
// processes values from its own Deque, pushing the new values it discovers;
// when its deque is empty it steals the oldest value of another worker's
// deque (Set.Steal); when stealing fails it offers termination
// (Terminator.Offer), which either ends the phase for all workers at once or
// sends the worker back to stealing because work showed up. Set.Drain is that
// loop. Set.DrainLocal is the loop of a collector's marker: each worker keeps
// what it discovers on a private stack (Local, plain appends) and publishes
// part of it to its deque only while another worker is hungry; a thief takes
// a batch at a time. If a worker fails, Terminator.Abort ends the phase for all of them
// early, and Set.Clear drops the values it left behind.
//
// Deque is the Chase-Lev deque with an array that grows and is never reused,
// so that its slots may hold any type without a data race; its documentation
// gives the argument. Push, Pop and Steal are allocation-free in the steady
// state.
//
// The package imports only the standard library.
package steal
