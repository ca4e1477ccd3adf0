// Package gang is workgang's dispatcher, for programs that own their worker
// goroutines: it hands n copies of a task to goroutines blocked in Serve and
// waits for them, with the calling goroutine optionally running copies itself.
// Most programs want package workers, which owns the goroutines and adds the
// run lock, lazy creation, panics re-raised at the caller, and placement.
//
// It plays the part of HotSpot's WorkerTaskDispatcher:
//
//	d := gang.New(k)              // k worker slots
//	for i := range k {
//		go d.Serve(i)             // the embedder's goroutines, one per slot
//	}
//	p, pe := gang.Prepare(task)   // asks CallerCanRun once (pe: it panicked)
//	ran, pe := d.Run(p, n)        // n copies, ids 0..n-1, each exactly once
//	d.Stop(k)                     // every Serve returns
//
// Run and Stop must not be called concurrently with each other: one
// coordinator at a time, as in HotSpot (package workers serializes them with
// its run lock). A submitter that must not wait runs its copies on its own
// goroutine with RunOnCaller. Serve(i) must be called by one goroutine at a
// time per slot; one that left Serve by a copy's runtime.Goexit is replaced
// by calling Serve(i) again.
//
// Besides Run's memory model: a started copy runs to its end on the goroutine
// that claimed it, which claims another copy of the run only after it
// returned; every copy not yet started can be started by its own worker (copy
// c by worker c), which runs nothing else of the run before it. So the copies
// of a plain run may wait for each other (a barrier: tasks/team) without
// deadlock, though a worker that finished its own copy may run others. A
// caller-runs run gives no such promise: its caller runs copies in turn.
//
// Waiters spin only while a processor would otherwise idle, then park on a
// semaphore (README.md beside this file argues the protocol, and
// docs/model/dispatch.pml model-checks it with SPIN).
package gang
