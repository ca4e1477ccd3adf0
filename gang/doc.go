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
// its run lock). A submitter that must not wait for the coordinator runs its
// copies on its own goroutine with RunOnCaller, which uses no worker and no
// state of the Dispatcher. Serve(i) must be called by exactly one goroutine
// at a time per slot; a goroutine that left Serve because a copy called
// runtime.Goexit is replaced by calling Serve(i) again.
//
// Guarantees, besides Run's memory model (see Run): a copy that is started
// runs to its end on the goroutine that claimed it, and a goroutine claims
// another copy of the same run only after the previous one returned; every
// copy not yet started can be started by the worker it is meant for (copy c
// by worker c), which runs nothing else of the run before it. So the copies
// of a plain run may wait for each other (at a barrier: see tasks/team)
// without deadlock. Copies that never wait for each other may still run one
// after another on one goroutine: a worker that finished its own copy takes
// the next copies whose workers have not started them. A caller-runs run
// gives no such promise: the caller runs copies one after another.
//
// Waiters spin only while a processor would otherwise idle, then park on a
// semaphore of package semaphore (README.md beside this file has the rule,
// the protocol and why no wake-up is lost; docs/model/dispatch.pml
// model-checks it with SPIN).
package gang
