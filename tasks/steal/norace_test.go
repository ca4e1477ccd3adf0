//go:build !race

package steal_test

// raceEnabled reports whether the race detector is on: loops are then about
// ten times slower, and sized down.
const raceEnabled = false
