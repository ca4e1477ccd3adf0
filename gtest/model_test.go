package gtest

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var modelFull = flag.Bool("model.full", false, "TestDispatchModel: check every configuration of docs/model/dispatch.pml (about 2 minutes) instead of the quick set")

// TestDispatchModel model-checks docs/model/dispatch.pml (the semaphore and the
// dispatch protocol) with SPIN through .ci/spin-check, the script CI runs: the
// sound configurations must verify with errors: 0, and the deliberately broken
// variants must be rejected. It never installs anything; without spin and gcc
// on PATH it skips.
func TestDispatchModel(t *testing.T) {
	for _, tool := range []string{"spin", "gcc", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH, so the SPIN model of the dispatch protocol is not checked here "+
				"(install it with `apt-get install spin gcc`, or run `bash .ci/spin-check`, which installs it)", tool)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", ".ci", "spin-check"))
	require.NoError(t, err)
	args := []string{script, "--quick"}
	limit := 3 * time.Minute
	if *modelFull {
		args, limit = args[:1], 10*time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Env = append(cmd.Environ(), "SPIN_CHECK_NO_INSTALL=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	text := string(out)
	t.Logf("bash %s (%v):\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), text)
	require.NoError(t, err, "spin-check failed (output above)")
	require.NotContains(t, text, "SKIPPED", "spin-check skipped although spin and gcc are on PATH")
	require.Contains(t, text, "== spin-check: ok")
	// Every broken variant must have been run and rejected.
	for _, bug := range []string{"BUG_LOST_WAKEUP", "BUG_CALLER_N", "BUG_TRYWAIT_ZERO"} {
		require.Regexp(t, `(?m)^ok +`+bug+` .*rejected as required`, text, "broken variant %s not rejected", bug)
	}
	require.NotRegexp(t, `(?m)^FAIL`, text)
}

// TestDispatchModelMapsToCode keeps docs/model/dispatch.pml in step with the
// code: each Go statement the model's steps stand for (docs/model/README.md)
// must still be in the source. When this fails, the protocol changed: update
// the model and the README's mapping (and this list) together.
func TestDispatchModelMapsToCode(t *testing.T) {
	for file, stmts := range map[string][]string{
		"semaphore/semaphore.go": {
			"old := s.count.Add(int64(n)) - int64(n)",
			"if old >= 0 {",
			"s.wakeParked(min(int64(n), -old))",
			"wake <- struct{}{}",
			"c := s.count.Load()",
			"if c <= 0 {",
			"if s.count.CompareAndSwap(c, c-1) {",
			"if budget > 0 && s.spinFor(budget, sp) {",
			"wake := s.wakeChan()",
			"if s.count.Add(-1) >= 0 {",
			"<-wake",
		},
		"gang/gang.go": {
			"d.task = t",
			"d.claimed.Store(0)",
			"d.notFinished.Store(int64(n))",
			"d.start.Signal(n)",
			"d.start.Signal(n - 1)",
			"d.execute(t, int(d.claimed.Add(1)-1), true)",
			"if !d.start.TryWait() {",
			"d.end.Wait()",
			"d.waitEnd(n, callerRuns)",
			"d.end.WaitWith(&d.coord, budget)",
			"how = d.start.WaitWith(sp, d.start.Spin())",
			"t := d.task",
			"if t == nil {",
			"d.execute(t, int(d.claimed.Add(1)-1), false)",
			"d.task = nil",
			"d.start.Signal(k)",
			"if d.notFinished.Add(-1) == 0 {",
			"d.end.Signal(1)",
		},
		"workers/workers.go": {
			"go w.work(i, wk)",
			"w.d.Stop(k)",
			"w.wg.Wait()",
			"w.wg.Done()",
		},
	} {
		src, err := os.ReadFile(filepath.Join("..", file))
		require.NoError(t, err)
		for _, stmt := range stmts {
			if !strings.Contains(string(src), stmt) {
				t.Errorf("%s no longer contains %q, a statement docs/model/dispatch.pml models: "+
					"update the model, docs/model/README.md's mapping and this list together", file, stmt)
			}
		}
	}
}
