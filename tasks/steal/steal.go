// Package steal is an advanced building block, for runtimes whose parallel
// phases discover their work as they go, such as a collector's mark (work
// known up front wants workers.ForRange): work stealing for the copies of a
// phase, with a set of per-worker deques and randomized victim selection
// (Set), and a terminator that tells the workers when every deque has run
// dry for good (Terminator).
//
// The shape is the one of a tracing garbage collector's mark phase (HotSpot's
// GenericTaskQueue, GenericTaskQueueSet and TaskTerminator), and Set.Drain is
// its loop: each worker processes the values it discovers from a private
// stack (Local, plain appends), and publishes part of it to its deque only
// while another worker is hungry; when its stack and deque are empty it
// steals the oldest values of another worker's deque, a batch at a time; when
// stealing fails it offers termination, which either ends the phase for all
// workers at once or sends the worker back to stealing because work showed
// up. If a worker fails, Terminator.Abort ends the phase for all of them
// early, and Set.Clear drops the values it left behind.
//
// The deques are Chase-Lev deques with arrays that grow and are never
// reused, so that their slots may hold any type without a data race (deque.go
// gives the argument); pushing, popping and stealing are allocation-free in
// the steady state.
//
// The package imports only the standard library and the module's internal
// packages spin (the terminator's waiting policy) and pad.
package steal
