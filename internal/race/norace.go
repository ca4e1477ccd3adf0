//go:build !race

// Package race reports whether the race detector is on, for the module's
// tests: under it, memory operations are several times slower, so stress
// loops are sized down, and allocation counts are not meaningful (the
// detector allocates), so allocation checks run only without it. It is the
// module's one race flag; the package imports nothing.
package race

// Enabled reports whether the binary was built with -race.
const Enabled = false
