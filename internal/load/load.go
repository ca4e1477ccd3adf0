// Package load tells whether other processes' threads wait for the
// machine's CPUs: the one reading of the machine that workgang's wait policy
// (internal/spin, hint Load) takes. On Linux it reads the kernel's count of
// runnable threads in /proc/loadavg, less this process's running goroutines,
// against the CPUs online, with hysteresis; elsewhere it reports false.
//
// OthersWaiting must not be called by two goroutines at once: the wait
// policy calls it under its view's mutex, which orders successive calls.
//
// The package imports only the standard library.
package load
