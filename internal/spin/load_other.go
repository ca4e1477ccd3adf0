//go:build !linux

package spin

// Elsewhere than Linux the policy sees neither the affinity mask nor the
// machine's load: hint Load only follows GOMAXPROCS.

func allowedCPUs() int { return 0 }

func othersWaiting(int) bool { return false }
