package gtest

import (
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var modelFull = flag.Bool("model.full", false, "TestDispatchModel: check every configuration of docs/model/dispatch.pml instead of the quick set (about 7 CPU minutes)")

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
		args, limit = args[:1], 30*time.Minute // 14 minutes of wall time on 2 shared vCPUs
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
		"BUG_NO_WAKE_CAS", "BUG_BATCH_CLAIM", "BUG_NO_LOCK"} {
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
// must still be in the source, and every function of gang/protocol.go must
// have its row in the README's mapping, and every row a function. When this
// fails, the protocol changed: update the model, the README's mapping and
// this list together.
func TestDispatchModelMapsToCode(t *testing.T) {
	for where, stmts := range map[string][]string{
		// The protocol, function by function (the README's table).
		"gang/protocol.go": {
			// Run.
			"d.gen++",
			"d.task, d.name = p.t, p.Name()",
			"d.groups[g].left.Store(int64(min(groupSize, n-g*groupSize)))",
			"d.groupsLeft.Store(int64(groups))",
			"d.runGen.Store(gen)",
			"d.run.Store(word)",
			"d.wakeChildren(-1, m)",
			"callerCopies = d.runOnCaller(n, m, gen)",
			"d.waitEnd(gen, n, m)",
			`d.task, d.name = nil, ""`,
			// A late run: Run, Wake, armLate, disarmLate.
			"late := p.late && p.callerRuns",
			"d.armLate(word&^(callerBit|nMask) | uint64(m))",
			"d.disarmLate()",
			"w := d.late.Load()",
			"if w != 0 && d.late.CompareAndSwap(w, 0) {",
			"d.wakeChildren(-1, int(w&nMask))",
			"d.late.Store(word)",
			"d.timer = time.AfterFunc(d.lateBound, d.Wake)",
			"d.timer.Reset(d.lateBound)",
			"d.late.Store(0)",
			"d.timer.Stop()",
			"d.Wake()",
			// runOnCaller.
			"d.execute(n-1, n, gen, true)",
			"for c := m - 1; c >= 0; c-- {",
			"if d.claim(c, gen) {",
			"d.execute(c, n, gen, true)",
			"d.waitEnd(gen, n, m)",
			// claim.
			"old := s.claim.Load()",
			"return old < gen && s.claim.CompareAndSwap(old, gen)",
			// wakeChildren and wake.
			"for c := 2*p + 2; c < min(2*p+4, m); c++ {",
			"d.wake(c)",
			"if s.state.Load() == parked && s.state.CompareAndSwap(parked, waking) {",
			"s.sem.Signal(1)",
			// Serve and serveCopy.
			"r, gen := d.next(s, i, needed)",
			"s.seen = gen",
			"if r&stopBit != 0 {",
			"d.wakeChildren(i, m)",
			"if i < m {",
			"d.serveCopy(s, i, n, gen)",
			"for k := 1; k <= stealAhead && k < m; k++ {",
			"d.serveCopy(s, (i+k)%m, n, gen)",
			"if d.slots[c].state.Load() != awake && d.serveCopy(s, c, n, gen) {",
			"if !d.claim(c, gen) {",
			"d.execute(c, n, gen, false)",
			// next, fresh, park.
			"if d.fresh(s) {",
			"return d.snapshot()",
			"if d.policy.Idle(&s.wait, i, needed, func() bool { return d.fresh(s) }) {",
			"d.park(s)",
			"return genOf(d.run.Load()) != s.seen&genMask",
			"s.state.Store(parked)",
			"if !s.state.CompareAndSwap(parked, awake) {",
			"s.sem.Wait()",
			"s.state.Store(awake)",
			// execute, retire, finish.
			"defer d.retire(c, n, gen)",
			"runCopy(d.task, d.name, c, onCaller, &d.fails)",
			"if d.groups[c/groupSize].left.Add(-1) != 0 {",
			"if n > groupSize && d.groupsLeft.Add(-1) != 0 {",
			"if d.finish(gen) {",
			"if d.coordParked.Load() == gen && d.coordParked.CompareAndSwap(gen, 0) {",
			"d.coordWake.Signal(1)",
			// waitEnd.
			"last = &d.groups[0].left",
			"ended := func() bool { return last.Load() == 0 }",
			"if ended() {",
			"if d.policy.End(running, ended) {",
			"d.coordParked.Store(gen)",
			"if !d.coordParked.CompareAndSwap(gen, 0) {",
			"d.coordWake.Wait()",
			// Stop.
			"d.runGen.Store(d.gen)",
			"d.run.Store((d.gen&genMask)<<genShift | stopBit)",
			"d.wake(i)",
		},
		// A task's user code (gang/task.go): RunOnCaller, copiesFrom, runCopy.
		"gang/task.go": {
			"copiesFrom(p, 0, n, f)",
			"runCopy(p.t, p.Name(), *c, true, f)",
			"panicked, v, stack := catch.Call(func() { t.Work(c) })",
		},
		// The slot states; workers and the coordinator park on semaphores
		// that never spin (the model's Wait is one decrement of the count).
		"gang/gang.go": {
			"awake  uint32 = 0",
			"parked uint32 = 1",
			"waking uint32 = 2",
			"d.slots[i].sem.SetSpin(0)",
			"d.coordWake.SetSpin(0)",
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
			"go w.work(c.d, i, wk, true)",
			"go w.work(d, i, wk, false)",
			"d.Serve(i)",
			"w.crew.Load().d.Stop(k)",
			"w.wg.Wait()",
			"w.wg.Done()",
			// The run lock (SUBMIT): tryLock is a CAS from free; a run
			// unlocks when Dispatcher.Run returned; a busy caller-runs run
			// runs every copy on its caller.
			"func (l *runLock) tryLock(token uint64) bool { return l.state.CompareAndSwap(0, token<<1) }",
			"if !w.mu.tryLock(token(true)) {",
			"w.runBusy(op, plan, n)",
			"p := gang.RunOnCaller(plan, n)",
			"if w.mu.tryLock(token(runsUserCode)) {",
			"defer w.mu.unlock()",
			"ran, p := w.crew.Load().d.Run(plan, n)",
		},
	} {
		src := goSource(t, where)
		for _, stmt := range stmts {
			if !strings.Contains(src, stmt) {
				t.Errorf("%s no longer contains %q, a statement docs/model/dispatch.pml models: "+
					"update the model, docs/model/README.md's mapping and this list together", where, stmt)
			}
		}
	}

	// One to one: a row of the README's protocol.go table per function of
	// protocol.go, and a function per row.
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", "gang", "protocol.go"), nil, 0)
	require.NoError(t, err)
	funcs := map[string]bool{}
	for _, decl := range f.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok {
			funcs[fd.Name.Name] = true
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "docs", "model", "README.md"))
	require.NoError(t, err)
	const heading = "### gang/protocol.go"
	doc := string(readme)
	i := strings.Index(doc, heading)
	require.GreaterOrEqual(t, i, 0, "docs/model/README.md has no %q section", heading)
	table := doc[i+len(heading):]
	if end := strings.Index(table, "\n#"); end >= 0 {
		table = table[:end]
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)`").FindAllStringSubmatch(table, -1) {
		rows[m[1]] = true
	}
	for fn := range funcs {
		if !rows[fn] {
			t.Errorf("gang/protocol.go's %s has no row in docs/model/README.md's %q table: map it to the model's steps, or say why it has none", fn, heading)
		}
	}
	for fn := range rows {
		if !funcs[fn] {
			t.Errorf("docs/model/README.md's %q table has a row for %s, which gang/protocol.go no longer declares", heading, fn)
		}
	}
}

// goSource returns the Go file where (a path ending in .go, from the module's
// root), or the non-test Go files of the package directory where,
// concatenated: a statement of a package other than gang's protocol may move
// between the files of its package without changing the protocol.
func goSource(t *testing.T, where string) string {
	t.Helper()
	if strings.HasSuffix(where, ".go") {
		src, err := os.ReadFile(filepath.Join("..", where))
		require.NoError(t, err)
		return string(src)
	}
	return packageSource(t, where)
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
