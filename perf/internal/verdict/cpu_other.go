//go:build !unix

package verdict

import "time"

// ownCPU cannot tell without getrusage: the probe reports nothing.
func ownCPU() (time.Duration, bool) { return 0, false }
