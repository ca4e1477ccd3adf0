//go:build !linux

package spin

// Elsewhere than Linux the policy does not see the machine's load: hint Load
// changes nothing there.
func othersWaiting(int) bool { return false }
