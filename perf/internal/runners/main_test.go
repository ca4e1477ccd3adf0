package runners

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// runner, set and pool must be closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
