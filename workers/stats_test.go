package workers_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// TestStatsCountersMeanTheirDocs: no counter goes down, and each counts what
// its doc names. Each row does one thing to a set and says how every counter
// it concerns moves; the test also checks that no counter went down.
func TestStatsCountersMeanTheirDocs(t *testing.T) {
	plain := tasks.Func("plain", func(int) {})
	for _, tc := range []struct {
		name string
		// set makes the set and returns its cleanup; do is the step.
		set func(t *testing.T) (*workers.Workers, func())
		do  func(t *testing.T, w *workers.Workers)
		// want checks the step's effect, given the snapshots around it.
		want func(t *testing.T, w *workers.Workers, before, after workers.Stats, createdBefore int)
	}{{
		// A later Acquire with a larger maxWorkers replaces the crew: the
		// workers it had are started again, so neither count drops, and
		// raising MaxWorkers is not a run that waited.
		name: "grow",
		set: func(t *testing.T) (*workers.Workers, func()) {
			w, release := workers.Acquire("stats-grow", 2)
			w.RunN(plain, 2)
			return w, release
		},
		do: func(t *testing.T, w *workers.Workers) {
			_, release := workers.Acquire("stats-grow", 4)
			defer release()
		},
		want: func(t *testing.T, w *workers.Workers, before, after workers.Stats, createdBefore int) {
			assert.Equal(t, 2, createdBefore)
			assert.Equal(t, 2, w.CreatedWorkers(), "the workers it had, restarted in the new crew")
			assert.Equal(t, before.Created+2, after.Created, "goroutines ever started: %v", after)
			assert.Equal(t, before.Waits, after.Waits, "a grow is not a run: %v", after)
			assert.Equal(t, before.Runs, after.Runs, "%v", after)
		},
	}, {
		// A grow that waits for a run in progress: still not a counted wait.
		name: "grow waiting for a run",
		set: func(t *testing.T) (*workers.Workers, func()) {
			w, release := workers.Acquire("stats-grow-wait", 2)
			return w, release
		},
		do: func(t *testing.T, w *workers.Workers) {
			unblock := holdSet(w, 2)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, release := workers.Acquire("stats-grow-wait", 4)
				release()
			}()
			waitUntil(t, 10*time.Second, "the grow waits in line", func() bool { return workers.Queued(w) == 1 })
			unblock()
			<-done
			w.RunN(plain, 2) // one run on a free set
		},
		want: func(t *testing.T, w *workers.Workers, before, after workers.Stats, createdBefore int) {
			assert.Equal(t, before.Waits, after.Waits, "neither the grow nor a run on a free set waited: %v", after)
			assert.Zero(t, after.WaitTime, "%v", after)
			assert.Equal(t, before.Runs+2, after.Runs, "the hold and the run: %v", after)
			assert.GreaterOrEqual(t, w.CreatedWorkers(), createdBefore)
		},
	}, {
		// A RunContext that gave up while waiting waited: counted in Waits
		// (and WaitTime), not in Runs.
		name: "cancelled wait",
		set: func(t *testing.T) (*workers.Workers, func()) {
			w := workers.New("stats-cancel", 2)
			return w, w.Close
		},
		do: func(t *testing.T, w *workers.Workers) {
			unblock := holdSet(w, 2)
			defer unblock()
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error)
			go func() {
				errc <- w.RunContext(ctx, 4, func(context.Context, int) error { return nil })
			}()
			waitUntil(t, 10*time.Second, "the run waits in line", func() bool { return workers.Queued(w) == 1 })
			cancel()
			assert.ErrorIs(t, <-errc, context.Canceled)
		},
		want: func(t *testing.T, w *workers.Workers, before, after workers.Stats, createdBefore int) {
			assert.Equal(t, before.Waits+1, after.Waits, "%v", after)
			assert.Greater(t, after.WaitTime, before.WaitTime, "%v", after)
			assert.Equal(t, before.Runs+1, after.Runs, "only the hold ran: %v", after)
		},
	}, {
		// A loop that found a set with concurrent runs busy ran alone on
		// its caller: busy, not capped, whatever GOMAXPROCS.
		name: "busy loop",
		set: func(t *testing.T) (*workers.Workers, func()) {
			w := workers.New("stats-busy", 4, workers.WithConcurrentRuns())
			prev := runtime.GOMAXPROCS(1) // ActiveWorkers 4 > GOMAXPROCS
			spin.Refresh()
			return w, func() { w.Close(); runtime.GOMAXPROCS(prev); spin.Refresh() }
		},
		do: func(t *testing.T, w *workers.Workers) {
			unblock := holdSet(w, 2)
			defer unblock()
			w.ForRange(64, func(int, int, int) {})
			w.Do(8, func(int) {})
		},
		want: func(t *testing.T, w *workers.Workers, before, after workers.Stats, createdBefore int) {
			assert.Equal(t, before.BusyRuns+2, after.BusyRuns, "%v", after)
			assert.Equal(t, before.CappedLoops, after.CappedLoops, "a busy loop runs one copy: nothing was cut: %v", after)
		},
	}, {
		// The same loop on the free set is cut to GOMAXPROCS, and counted.
		name: "capped loop",
		set: func(t *testing.T) (*workers.Workers, func()) {
			w := workers.New("stats-capped", 4, workers.WithConcurrentRuns())
			prev := runtime.GOMAXPROCS(1)
			spin.Refresh()
			return w, func() { w.Close(); runtime.GOMAXPROCS(prev); spin.Refresh() }
		},
		do: func(t *testing.T, w *workers.Workers) { w.ForRange(64, func(int, int, int) {}) },
		want: func(t *testing.T, w *workers.Workers, before, after workers.Stats, createdBefore int) {
			assert.Equal(t, before.CappedLoops+1, after.CappedLoops, "%v", after)
			assert.Equal(t, before.BusyRuns, after.BusyRuns, "%v", after)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			w, cleanup := tc.set(t)
			defer cleanup()
			before, created := w.Stats(), w.CreatedWorkers()
			tc.do(t, w)
			after := w.Stats()
			tc.want(t, w, before, after, created)
			assertNoCounterDown(t, before, after)
			assert.GreaterOrEqual(t, w.CreatedWorkers(), created, "CreatedWorkers went down")
		})
	}
}

func assertNoCounterDown(t *testing.T, before, after workers.Stats) {
	t.Helper()
	for _, c := range []struct {
		name          string
		before, after uint64
	}{
		{"Runs", before.Runs, after.Runs}, {"InlineRuns", before.InlineRuns, after.InlineRuns},
		{"BusyRuns", before.BusyRuns, after.BusyRuns}, {"CallerOnlyRuns", before.CallerOnlyRuns, after.CallerOnlyRuns},
		{"CappedLoops", before.CappedLoops, after.CappedLoops}, {"CallerCopies", before.CallerCopies, after.CallerCopies},
		{"WorkerCopies", before.WorkerCopies, after.WorkerCopies}, {"Ready", before.Ready, after.Ready},
		{"Spun", before.Spun, after.Spun}, {"Parks", before.Parks, after.Parks}, {"Wakeups", before.Wakeups, after.Wakeups},
		{"Created", uint64(before.Created), uint64(after.Created)},
		{"PlacementFailures", uint64(before.PlacementFailures), uint64(after.PlacementFailures)},
		{"Waits", before.Waits, after.Waits}, {"WaitTime", uint64(before.WaitTime), uint64(after.WaitTime)},
	} {
		assert.GreaterOrEqual(t, c.after, c.before, "%s went down: %v -> %v", c.name, before, after)
	}
}
