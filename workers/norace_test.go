//go:build !race

package workers_test

const raceEnabled = false
