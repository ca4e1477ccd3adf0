package interleaved

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// section and every test stop what they start, and the benchmarks' shared
// set and peers (benchFixture) are stopped after the last benchmark, before
// the check.
func TestMain(m *testing.M) { goleak.VerifyTestMain(stopAfter{m}) }

// stopAfter runs the tests and benchmarks, then stops the benchmarks'
// shared implementations.
type stopAfter struct{ m *testing.M }

// Run runs m and stops the benchmark fixture if a benchmark started it.
func (s stopAfter) Run() int {
	code := s.m.Run()
	if err := stopBenchFixture(); err != nil {
		println("interleaved:", err.Error())
		return 1
	}
	return code
}
