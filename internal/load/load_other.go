//go:build !linux

package load

// OthersWaiting reports false: elsewhere than Linux the load is not read.
func OthersWaiting(int) bool { return false }
