package semcmp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every benchmark's goroutines end with it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
