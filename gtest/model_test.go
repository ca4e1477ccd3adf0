package gtest

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var modelFull = flag.Bool("model.full", false, "TestDispatchModel: check every configuration of docs/model/dispatch.pml (a few minutes on 2 cores) instead of the quick set")

// TestDispatchModel model-checks docs/model/dispatch.pml (the dispatch protocol
// of package gang) with SPIN through .ci/spin-check, the script CI runs: the
// sound configurations must verify with errors: 0, and the deliberately broken
// variants must be rejected. It never installs anything. It takes seconds to
// minutes, so -short skips it; without spin and gcc on PATH it skips too.
// Under CI (the environment variable CI set to a true value, as CI services
// do and .ci/run does) it never skips: -short does not apply, and missing
// tools fail it, so that a green CI always means the model was checked.
func TestDispatchModel(t *testing.T) {
	if testing.Short() && !underCI() {
		t.Skip("-short: the SPIN model of the dispatch protocol is not checked (go test without -short, or bash .ci/spin-check, checks it)")
	}
	for _, tool := range []string{"spin", "gcc", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			const msg = "%s is not on PATH, so the SPIN model of the dispatch protocol is not checked " +
				"(install it with `apt-get install spin gcc`, or run `bash .ci/spin-check`, which installs it)"
			if underCI() {
				t.Fatalf(msg+"; under CI the model must be checked", tool)
			}
			t.Skipf(msg, tool)
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
	for _, bug := range []string{"BUG_NO_RECHECK", "BUG_STALE_CLAIM", "BUG_NO_TREE", "BUG_EARLY_DONE", "BUG_UNTAGGED_END",
		"BUG_NO_WAKE_CAS", "BUG_BATCH_CLAIM", "BUG_NO_LOCK", "BUG_SIDE_CLAIM_STORE", "BUG_SIDE_NO_END_CAS",
		"BUG_SIDE_UNTAGGED_END", "BUG_SIDE_GEN_AFTER", "BUG_SIDE_EARLY_RELEASE"} {
		require.Regexp(t, `(?m)^ok +`+bug+` .*rejected as required`, text, "broken variant %s not rejected", bug)
	}
	require.NotRegexp(t, `(?m)^FAIL`, text)
}

// underCI reports whether the tests run under CI: the environment variable CI
// holds a true value ("true", "1", ...).
func underCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// TestDispatchModelMapsToCode keeps docs/model/dispatch.pml in step with the
// code: each Go statement the model's steps stand for (docs/model/README.md)
// must still be in the source. When this fails, the protocol changed: update
// the model and the README's mapping (and this list) together.
func TestDispatchModelMapsToCode(t *testing.T) {
	for file, stmts := range map[string][]string{
		"gang": {
			// Run and runOnCaller.
			"d.gen++",
			"d.task = p.t",
			"d.groups[g].left.Store(int64(min(groupSize, n-g*groupSize)))",
			"d.groupsLeft.Store(int64(groups))",
			"d.runGen.Store(gen)",
			"d.run.Store(word)",
			"d.wakeFor(0, m)",
			"d.wakeFor(1, m)",
			"d.execute(t, n-1, n, gen, true, false)",
			"for c := m - 1; c >= 0; c-- {",
			"d.waitEnd(gen, m, !p.callerRuns)",
			"d.task = nil",
			// claim and wakeIfParked.
			"old := s.claim.Load()",
			"return old < gen && s.claim.CompareAndSwap(old, gen)",
			"if s.state.Load() == parked && s.state.CompareAndSwap(parked, waking) {",
			"s.wake.Signal(1)",
			// wakeFor: wakeIfParked, or the children of an aside slot.
			"switch s.state.Load() {",
			"if s.state.CompareAndSwap(parked, waking) { // as in wakeIfParked",
			"case aside:",
			"if c := 2*i + 2; c < m {",
			"d.wakeFor(c, m)",
			// Workers and the coordinator park on semaphores that never spin
			// (the model's Wait is one decrement of the count).
			"d.slots[i].wake.SetSpin(0)",
			"d.coordWake.SetSpin(0)",
			// Serve, next, park.
			"s.seen = gen",
			"if r&stopBit != 0 {",
			"if c := 2*i + 2; c < m {",
			"d.wakeFor(c, m)",
			"d.wakeFor(c+1, m)",
			"if d.claim(i, gen) {",
			"for k := 1; k <= stealAhead && k < m; k++ {",
			"if c := (i + k) % m; d.claim(c, gen) {",
			"if d.slots[c].state.Load() != awake && d.claim(c, gen) {",
			"return genOf(d.run.Load()) != s.seen&genMask",
			"return d.snapshot()",
			"d.park(s)",
			"s.state.Store(parked)",
			"if !s.state.CompareAndSwap(parked, awake) {",
			"s.wake.Wait()",
			"s.state.Store(awake)",
			// Stop.
			"d.run.Store((d.gen&genMask)<<genShift | stopBit)",
			"d.wakeIfParked(i)",
			// waitEnd and finish.
			"if d.done.Load() == gen {",
			"d.coordParked.Store(gen)",
			"if !d.coordParked.CompareAndSwap(gen, 0) {",
			"d.coordWake.Wait()",
			"d.done.Store(gen)",
			"if d.coordParked.Load() == gen && d.coordParked.CompareAndSwap(gen, 0) {",
			"d.coordWake.Signal(1)",
			// retire.
			"defer d.retire(c, n, gen, handBack)",
			"if d.groups[c/groupSize].left.Add(-1) != 0 {",
			"if n > groupSize && d.groupsLeft.Add(-1) != 0 {",
			"d.finish(gen)",
			// SIDE: RunBeside, sideOnCaller, endSide (the holder).
			"if sd.owner.Load() != 0 || !sd.owner.CompareAndSwap(0, 1) {",
			"sd.gen++",
			"sd.task = p.t",
			"sd.left.Store(int64(n))",
			"sd.word.Store((gen&sideTagMask)<<sideTagShift | uint64(n)<<nBits | 1)",
			"if n > 1 {",
			"d.wakeHelper()",
			"for c, ok := 0, true; ok; c, ok = d.claimSide() {",
			"d.executeSide(t, c, gen, true)",
			"d.waitSide(gen)",
			"sd.task = nil",
			"sd.owner.Store(0)",
			// claimSide and sideOpen.
			"w := sd.word.Load()",
			"if w&nMask >= w>>nBits&nMask {",
			"if sd.word.CompareAndSwap(w, w+1) {",
			"return w&nMask < w>>nBits&nMask",
			// next, sleep, park and serveSide (a worker).
			"if d.sideOpen() {",
			"d.serveSide(s)",
			"return d.fresh(s) || d.sideOpen()",
			"return 0, 0, false",
			"if d.fresh(s) || d.sideOpen() {",
			"aside  uint32 = 3",
			"s.state.Store(aside)",
			"defer s.state.Store(awake)",
			"for ; ok; c, ok = d.claimSide() {",
			"t, gen := sd.task, sd.gen",
			"d.executeSide(t, c, gen, false)",
			// executeSide, retireSide.
			"defer d.retireSide(gen)",
			"if sd.left.Add(-1) != 0 {",
			"if sd.parked.Load() == gen && sd.parked.CompareAndSwap(gen, 0) {",
			"sd.wake.Signal(1)",
			// waitSide.
			"if sd.left.Load() == 0 {",
			"spin.Until(budget, &sd.coord, func() bool { return sd.left.Load() == 0 })",
			"sd.parked.Store(gen)",
			"if !sd.parked.CompareAndSwap(gen, 0) {",
			"sd.wake.Wait()",
			// wakeHelper.
			"r := d.run.Load()",
			"if d.done.Load() == d.runGen.Load() {",
			"for i := len(d.slots) - 1; i >= m; i-- {",
			"if s.state.Load() == parked && s.state.CompareAndSwap(parked, waking) {",
		},
		// Signal and Wait as the model's semSignal and semWait stand for them.
		"semaphore": {
			"old := s.count.Load()",
			"if !s.count.CompareAndSwap(old, old+int64(n)) {",
			"if old < 0 {",
			"wake <- struct{}{}",
			"if s.count.CompareAndSwap(c, c-1) {",
			"if s.count.Add(-1) >= 0 {",
			"<-wake",
		},
		"workers": {
			"go w.work(i, wk, true)",
			"go w.work(i, wk, false)",
			"w.d.Serve(i)",
			"w.d.Stop(k)",
			"w.wg.Wait()",
			"w.wg.Done()",
			// The run lock (SUBMIT): tryLock is a CAS from free; a run
			// unlocks when Dispatcher.Run returned.
			"func (l *runLock) tryLock(token uintptr) bool { return l.state.CompareAndSwap(0, token<<1) }",
			"if !w.mu.tryLock(token(true)) {",
			"w.runBusy(op, plan, t, n)",
			// SIDE: a busy run offers itself to the side slot first and runs
			// every copy on its caller only if the slot is held.
			"if ok, ran, p := w.d.RunBeside(plan, n); ok {",
			"if !w.mu.tryLock(token(runsUserCode)) {",
			"defer w.mu.unlock()",
			"ran, p := w.d.Run(plan, n)",
		},
	} {
		src := packageSource(t, file)
		for _, stmt := range stmts {
			if !strings.Contains(src, stmt) {
				t.Errorf("package %s no longer contains %q, a statement docs/model/dispatch.pml models: "+
					"update the model, docs/model/README.md's mapping and this list together", file, stmt)
			}
		}
	}
}

// packageSource returns the non-test Go files of the module's package dir,
// concatenated: a statement the model stands for may move between the files of
// its package without changing the protocol.
func packageSource(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		b.Write(src)
	}
	require.NotZero(t, b.Len(), "no Go files in %s", dir)
	return b.String()
}
