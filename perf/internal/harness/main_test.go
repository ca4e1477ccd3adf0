package harness

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them (the
// competitors of -compete must be stopped).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
