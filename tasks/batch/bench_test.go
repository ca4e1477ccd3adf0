package batch_test

import (
	"testing"

	"github.com/workgang/workgang/tasks/batch"
)

// BenchmarkWork is one copy running a batch of 4 serial and 2 parallel empty
// subtasks (claims included), then the reset for the next run.
func BenchmarkWork(b *testing.B) {
	bt := batch.New("bench")
	for range 4 {
		bt.AddSerial(batch.Func("s", 0.1, func(int) {}))
	}
	for range 2 {
		bt.AddParallel(batch.Func("p", 1, func(int) {}))
	}
	b.ReportAllocs()
	for range b.N {
		bt.Work(0)
		bt.Reset()
	}
}

func BenchmarkWorkers(b *testing.B) {
	bt := batch.New("bench")
	for range 8 {
		bt.AddParallel(batch.Func("p", 0.3, func(int) {}))
	}
	b.ReportAllocs()
	for range b.N {
		bt.Workers(8)
	}
}
