package workers_test

import (
	"fmt"
	"hash/crc32"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/slots"
	"github.com/workgang/workgang/tasks/team"
	"github.com/workgang/workgang/workers"
)

// Sum a slice in parallel on a set as large as the machine: ForRange hands
// the slice out in chunks, each copy adds up its chunks into a local sum and
// then into its own padded slot (so no two copies write the same cache line),
// and the slots are combined after the loop. This is the first example in
// README.md, as the body of its func main (gtest/readme_test.go checks that
// the two agree).
func Example() {
	w := workers.New("sum", runtime.GOMAXPROCS(0))
	defer w.Close()

	data := make([]int64, 1_000_000) // int64: the sum overflows a 32-bit int
	for i := range data {
		data[i] = int64(i)
	}
	partial := slots.New[int64](w.ActiveWorkers()) // one padded slot per copy
	w.ForRange(len(data), func(worker, lo, hi int) {
		var sum int64 // this chunk's sum
		for _, v := range data[lo:hi] {
			sum += v
		}
		*partial.At(worker) += sum // only this copy writes slot worker
	})
	fmt.Println(slots.Sum(partial)) // every chunk's writes are visible after ForRange
	// Output: 499999500000
}

// A task whose copies use their worker id: each copy adds up its own stripe
// of the slice into its own padded slot, and the slots are combined after
// the run.
func ExampleWorkers_Run() {
	w := workers.New("sum", 4)
	defer w.Close()

	data := make([]int, 1000)
	for i := range data {
		data[i] = i
	}
	n := w.ActiveWorkers() // Run's copies
	partial := slots.New[int](n)
	w.Run(tasks.Func("sum", func(worker int) {
		sum := partial.At(worker)
		for i := worker; i < len(data); i += n {
			*sum += data[i]
		}
	}))
	fmt.Println(slots.Sum(partial)) // every copy's writes are visible after Run
	// Output: 499500
}

// A task that opts in to caller-runs lets the calling goroutine take copies
// itself; with a single copy, RunN runs it inline and wakes no worker.
func ExampleWorkers_RunN_callerRuns() {
	w := workers.New("phases", 4)
	defer w.Close()

	var copies atomic.Int32
	phase := tasks.CallerRuns(tasks.Func("phase", func(worker int) { copies.Add(1) }))
	w.RunN(phase, 1) // inline: no worker is created or woken
	fmt.Println("created after n=1:", w.CreatedWorkers())
	w.RunN(phase, 4) // the caller runs at least one copy, 3 workers the rest
	fmt.Println("created after n=4:", w.CreatedWorkers())
	fmt.Println("copies:", copies.Load())
	// Output:
	// created after n=1: 0
	// created after n=4: 3
	// copies: 5
}

// A panic in a copy is re-raised by Run as a *PanicError once every other
// copy has finished; the set remains usable.
func ExampleWorkers_Run_panic() {
	w := workers.New("fragile", 2)
	defer w.Close()
	func() {
		defer func() {
			pe := recover().(*workers.PanicError)
			fmt.Printf("task %q copy %d panicked: %v\n", pe.Task, pe.Worker, pe.Value)
		}()
		w.Run(tasks.Func("divide", func(worker int) {
			if worker == 1 {
				panic("division by zero")
			}
		}))
	}()
	w.Run(tasks.Func("fine", func(int) {}))
	fmt.Println("still usable")
	// Output:
	// task "divide" copy 1 panicked: division by zero
	// still usable
}

// SetActiveWorkers chooses how many copies Run runs; RunN overrides it for
// one run without changing it.
func ExampleWorkers_SetActiveWorkers() {
	w := workers.New("gc", 8)
	defer w.Close()
	w.SetActiveWorkers(2)
	var copies atomic.Int32
	count := tasks.Func("count", func(int) { copies.Add(1) })
	w.Run(count)
	w.RunN(count, 3)
	fmt.Println(copies.Load(), w.ActiveWorkers(), w.CreatedWorkers())
	// Output: 5 2 3
}

// Runtimes in one process can share one set by name instead of each
// starting their own workers; the last release closes it. A *Shared has every
// method of Workers but Close, so no holder can close it under the others.
func ExampleAcquire() {
	a, releaseA := workers.Acquire("process-wide", 4)
	b, releaseB := workers.Acquire("process-wide", 4)
	fmt.Println(a == b)
	releaseA()
	b.RunN(tasks.Func("still-open", func(int) {}), 2)
	releaseB() // the last holder: closes the set
	// Output: true
}

// A library runs on the process's default set where it works, never at
// init: importing it starts nothing, and the set is made on first use.
// (Not run: the default set is never closed.)
func ExampleDefault() {
	scale := func(xs []float64, k float64) {
		workers.Default().ForRange(len(xs), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				xs[i] *= k
			}
		})
	}
	xs := []float64{1, 2, 3}
	scale(xs, 2)
	fmt.Println(xs)
}

// Stats counts runs, where copies ran, and how workers waited for them.
func ExampleWorkers_Stats() {
	w := workers.New("observed", 2)
	defer w.Close()
	task := tasks.Func("t", func(int) {})
	w.RunN(task, 2)
	w.RunN(tasks.CallerRuns(task), 1)
	s := w.Stats()
	fmt.Println(s.Runs, s.InlineRuns, s.CallerCopies+s.WorkerCopies)
	// Output: 2 1 3
}

// A relaxation on a ring, one run for all its steps: the members share each
// step's loop (team.Static: one block each) and meet at the loop's barrier
// before member 0 swaps the buffers, then at a second barrier before the next
// step reads them.
func ExampleWorkers_RunTeam() {
	w := workers.New("relax", 2)
	defer w.Close()

	cur, next := make([]float64, 8), make([]float64, 8)
	cur[0] = 64
	w.RunTeam("relax", 2, func(m *team.Member) {
		for range 3 {
			m.For(len(cur), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					l, r := cur[(i+len(cur)-1)%len(cur)], cur[(i+1)%len(cur)]
					next[i] = (l + 2*cur[i] + r) / 4
				}
			}, team.Static())
			if m.ID() == 0 {
				cur, next = next, cur
			}
			m.Barrier()
		}
	})
	fmt.Println(cur)
	// Output: [20 15 6 1 0 1 6 15]
}

// Request handlers share one set: each handler's loop runs on the workers
// when the set is free and on the handler's own goroutine when another
// handler's loop holds it, so no handler waits for another.
func ExampleWithConcurrentRuns() {
	w := workers.New("handlers", 2, workers.WithConcurrentRuns())
	defer w.Close()

	var wg sync.WaitGroup
	sums := make([]int64, 8)
	for h := range sums {
		wg.Add(1)
		go func() { // one request
			defer wg.Done()
			var sum atomic.Int64
			w.ForRange(1000, func(_, lo, hi int) {
				s := 0
				for i := lo; i < hi; i++ {
					s += i * (h + 1)
				}
				sum.Add(int64(s))
			})
			sums[h] = sum.Load()
		}()
	}
	wg.Wait()
	fmt.Println(sums[0], sums[7])
	// Output: 499500 3996000
}

// A goroutine per part of a range, ported to a set. The code before the
// port split data into parts of a computed size, rounded up to a multiple of
// 64 bytes, and started one goroutine per part:
//
//	partSize := (len(data)/4 + 63) &^ 63
//	sums := make([]uint32, (len(data)+partSize-1)/partSize)
//	var wg sync.WaitGroup
//	for lo := 0; lo < len(data); lo += partSize {
//		hi := min(lo+partSize, len(data))
//		wg.Add(1)
//		go func() {
//			defer wg.Done()
//			sums[lo/partSize] = crc32.ChecksumIEEE(data[lo:hi])
//		}()
//	}
//	wg.Wait()
//
// After the port, ForRange with WithChunk(partSize) calls the body once per
// part, with exactly that part's bounds, [k*partSize, min((k+1)*partSize, n)):
// a part is never merged with another and never split, whatever the number of
// copies, so lo/partSize is the part's index. The copies claim the parts
// (the caller runs some too) instead of one goroutine starting per part.
func ExampleWorkers_ForRange_parts() {
	w := workers.New("checksums", runtime.GOMAXPROCS(0))
	defer w.Close()

	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i % 251)
	}
	partSize := (len(data)/4 + 63) &^ 63 // 256: a multiple of 64
	sums := make([]uint32, (len(data)+partSize-1)/partSize)
	w.ForRange(len(data), func(_, lo, hi int) {
		sums[lo/partSize] = crc32.ChecksumIEEE(data[lo:hi]) // one part, one slot
	}, workers.WithChunk(partSize))
	for k, sum := range sums { // every part's write is visible after ForRange
		lo := k * partSize
		fmt.Printf("part %d [%d, %d): %08x\n", k, lo, min(lo+partSize, len(data)), sum)
	}
	// Output:
	// part 0 [0, 256): 5708a3cc
	// part 1 [256, 512): 367042b0
	// part 2 [512, 768): c5a57817
	// part 3 [768, 1000): 6c634487
}
