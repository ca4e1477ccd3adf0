package policy_test

import (
	"testing"

	"github.com/workgang/workgang/tasks/policy"
)

func BenchmarkActiveNext(b *testing.B) {
	p := policy.Active{WorkPerWorker: 1000, Max: 8}
	b.ReportAllocs()
	for i := range b.N {
		p.Next(i & 0xffff)
	}
}
