// Package semcmp holds benchmarks that compare semaphore.Semaphore with
// golang.org/x/sync's Weighted and a buffered channel:
//
//	go test -run '^$' -bench . ./perf/semcmp
//
// They live in the perf module, beside the other peer comparisons, so that
// the library's module needs no x/sync. The package has no API.
package semcmp
