package plots

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// runner, worker set, pool and process must be closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
