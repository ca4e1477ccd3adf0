package workers_test

import "github.com/workgang/workgang/internal/race"

// raceEnabled is the module's race flag (internal/race) under the name this
// package's tests use.
const raceEnabled = race.Enabled
