// Package load tells whether other processes' threads wait for the machine's
// CPUs, the one reading of the machine the wait policy (internal/spin) takes.
// OthersWaiting must not be called by two goroutines at once (the policy
// calls it under its view's mutex). It imports only the standard library.
package load
