//go:build !linux

package contended

import (
	"context"
	"runtime"
	"time"
)

// contendedRun is how one condition went (see contended_linux.go).
type contendedRun struct {
	Child   *contendedChild
	Setup   string
	Skipped string
}

// runCondition skips every condition: starting the processes, confining
// them and the cgroup are written for Linux.
func runCondition(context.Context, contendedCond, contendedSpec, time.Duration) (contendedRun, error) {
	return contendedRun{Skipped: "the contended section runs on Linux only"}, nil
}

// cpusAllowed returns the logical CPUs.
func cpusAllowed() int { return runtime.NumCPU() }

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
