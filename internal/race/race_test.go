package race_test

import (
	"runtime/debug"
	"testing"

	"go.uber.org/goleak"

	"github.com/workgang/workgang/internal/race"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The flag agrees with the build settings the go command records in the
// binary ("-race" is "true" under go test -race and absent otherwise).
func TestEnabledMatchesBuild(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	built := false
	for _, s := range info.Settings {
		if s.Key == "-race" {
			built = s.Value == "true"
		}
	}
	if race.Enabled != built {
		t.Fatalf("race.Enabled = %v; the build settings say -race=%v", race.Enabled, built)
	}
}
