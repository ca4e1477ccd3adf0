package workers_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workgang/workgang/internal/goid"
	"github.com/workgang/workgang/internal/testutil"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// FuzzAPI interprets its input as a program of calls on up to two worker sets
// (New with random sizes and options, WithConcurrentRuns among them,
// SetActiveWorkers, Run, RunN, runs from several goroutines at once, nested
// runs from inside copies, panicking and Goexit-ing copies, invalid
// arguments, Close, Close racing runs) and checks
// every call against a simple model of the set: the active count, whether it
// is closed, and what each call must do. It requires that
//
//   - every run that starts runs each copy id in [0, n) exactly once, and no
//     copy runs outside its run;
//   - a call panics only for misuse, with a message that starts with
//     "workers:" and names the bad value, or with *workers.PanicError for a
//     copy's panic (the first one, with the right count and origin);
//   - nothing hangs: each program has a deadline, and a program that misses it
//     fails the test with every goroutine's stack.
//
// The seed corpus is in testdata/fuzz/FuzzAPI; `go test ./workers` runs it.
func FuzzAPI(f *testing.F) {
	f.Add([]byte{0x00, 0x03, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x06})
	// A set with concurrent runs: three submitters at once (one makes a
	// RunContext of more ids than workers), a caller-runs run nested in a
	// dispatched one, a plain run and Close nested in an inline one.
	f.Add([]byte{0x00, 0x03, 0x83, 0x04, 0x07, 0x81, 0x83, 0xc5, 0x05, 0x03, 0x08, 0x05, 0x01, 0x00, 0x05, 0x01, 0x04})
	f.Fuzz(func(t *testing.T, prog []byte) {
		fzExec(t, prog)
	})
}

var fzTrace = flag.Bool("fz.trace", false, "FuzzAPI: log each program's calls")

const (
	fzMaxOps   = 24               // ops per program; longer inputs are cut
	fzMaxSet   = 6                // largest maxWorkers a program creates
	fzDeadline = 30 * time.Second // per program; far above any legal program's duration
)

// fzExec runs prog on its own goroutine under the deadline.
func fzExec(t *testing.T, prog []byte) {
	m := &fzMachine{prog: prog}
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.run()
	}()
	timer := time.NewTimer(fzDeadline)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		buf := make([]byte, 8<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("program %x hangs: not done after %v (op %d: %s). All goroutines:\n%s",
			prog, fzDeadline, m.opIndex.Load(), m.current(), buf)
	}
	if *fzTrace {
		t.Logf("program %x:\n%s", prog, strings.Join(m.trace, "\n"))
	}
	if m.err != nil {
		t.Fatalf("program %x, op %d (%s): %v\ntrace:\n%s", prog, m.opIndex.Load(), m.current(), m.err, strings.Join(m.trace, "\n"))
	}
}

// fzSet is the model of one set.
type fzSet struct {
	w      *workers.Workers
	name   string
	max    int
	active int
	closed bool
	// concurrent is WithConcurrentRuns: caller-runs runs may then run on
	// their callers when the set is busy, and nested ones run inline.
	concurrent bool
	created    int // lower bound: CreatedWorkers never decreases

	// What Stats must count (inline runs are counted in runs too).
	runs, inline uint64
	copies       uint64 // copies Stats must count (see the Goexit note in runChecked)
	// copySlack is how many fewer copies Stats may count: a loop of k
	// copies that finds a set with concurrent runs busy runs one copy.
	// inlineSlack is how many of the inline runs may be busy ones instead:
	// a loop of one copy that finds such a set busy.
	copySlack, inlineSlack uint64
	goexits                bool // a copy called Goexit: Stats' copy counts are then only bounded
	// loopExits: a loop's body call called Goexit, so the loop's drain may
	// have run copies of its own: Stats' copy counts have no upper bound.
	loopExits bool
}

type fzMachine struct {
	prog    []byte
	pos     int
	sets    [2]*fzSet
	made    int
	err     error
	trace   []string
	opIndex atomic.Int32
	curMu   sync.Mutex
	cur     string
	tracing bool // runtime/trace started by the program (opTrace)
}

func (m *fzMachine) current() string {
	m.curMu.Lock()
	defer m.curMu.Unlock()
	return m.cur
}

func (m *fzMachine) setCurrent(s string) {
	m.curMu.Lock()
	m.cur = s
	m.curMu.Unlock()
	m.trace = append(m.trace, s)
}

// next returns the next program byte; an exhausted program reads zeros.
func (m *fzMachine) next() byte {
	if m.pos >= len(m.prog) {
		m.pos++
		return 0
	}
	b := m.prog[m.pos]
	m.pos++
	return b
}

func (m *fzMachine) failf(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf(format, args...)
	}
}

func (m *fzMachine) run() {
	defer m.closeAll()
	for op := 0; op < fzMaxOps && m.pos < len(m.prog) && m.err == nil; op++ {
		m.opIndex.Store(int32(op))
		b := m.next()
		s := m.sets[b>>4&1]
		k := b & 0x0f
		switch k {
		case 8:
			m.opHostile(s)
			k = 255 // done
		case 9:
			m.opCycle(s)
			k = 255
		case 10:
			m.opNestedRelease(s)
			k = 255
		case 11:
			m.opContended(s)
			k = 255
		case 12:
			m.opCtxWait(s)
			k = 255
		case 13:
			m.opTrace()
			k = 255
		case 14:
			m.opHostileCtx(s)
			k = 255
		}
		switch k % 8 {
		case 0:
			m.opNew(int(b >> 4 & 1))
		case 1:
			m.opSetActive(s)
		case 2:
			m.opRun(s, false)
		case 3:
			m.opRun(s, true)
		case 4:
			m.opConcurrent(s)
		case 5:
			m.opNested(s)
		case 6:
			m.opClose(s)
		case 7:
			if k == 7 || k == 15 {
				m.opCloseRacing(s)
			}
		}
		_ = k
		if m.err == nil {
			m.checkAccessors()
		}
	}
}

// closeAll closes the program's sets and checks their final statistics.
func (m *fzMachine) closeAll() {
	if m.tracing {
		trace.Stop()
		m.tracing = false
	}
	for _, s := range m.sets {
		if s == nil {
			continue
		}
		if !s.closed {
			s.w.Close()
			s.closed = true
		}
		if m.err == nil {
			m.checkStats(s)
		}
	}
}

func (m *fzMachine) checkAccessors() {
	for _, s := range m.sets {
		if s == nil {
			continue
		}
		if s.w.Name() != s.name || s.w.MaxWorkers() != s.max || s.w.ActiveWorkers() != s.active {
			m.failf("set %q: Name/MaxWorkers/ActiveWorkers = %q/%d/%d; want %q/%d/%d",
				s.name, s.w.Name(), s.w.MaxWorkers(), s.w.ActiveWorkers(), s.name, s.max, s.active)
		}
		c := s.w.CreatedWorkers()
		if c < s.created || c > s.max {
			m.failf("set %q: CreatedWorkers = %d; want in [%d, %d]", s.name, c, s.created, s.max)
		}
		s.created = c
	}
}

func (m *fzMachine) checkStats(s *fzSet) {
	st := s.w.Stats()
	if st.Runs != s.runs || st.InlineRuns > s.inline || st.InlineRuns+s.inlineSlack < s.inline {
		m.failf("set %q: Stats runs/inline = %d/%d; want %d/%d (up to %d fewer inline) (%v)", s.name, st.Runs, st.InlineRuns, s.runs, s.inline, s.inlineSlack, st)
	}
	if !s.concurrent && st.BusyRuns != 0 || st.BusyRuns+st.InlineRuns > st.Runs {
		m.failf("set %q (concurrent=%v): Stats busy = %d of %d runs (%v)", s.name, s.concurrent, st.BusyRuns, st.Runs, st)
	}
	got := st.CallerCopies + st.WorkerCopies
	if !s.goexits && got+s.copySlack < s.copies || got > s.copies && !s.loopExits {
		m.failf("set %q: Stats counts %d copies; want %d, or up to %d fewer (goexits=%v) (%v)", s.name, got, s.copies, s.copySlack, s.goexits, st)
	}
}

// ---- calls ----

// fzOutcome is how a call ended.
type fzOutcome struct {
	v      any  // the recovered panic value
	goexit bool // the calling goroutine called runtime.Goexit
}

// fzCall runs fn on a new goroutine (so a Goexit on the caller ends only
// that goroutine) and reports how it ended.
func fzCall(fn func()) fzOutcome {
	o := testutil.Call(fn)
	return fzOutcome{v: o.Value, goexit: o.Goexit}
}

// wantMisuse checks that o is a panic with exactly msg.
func (m *fzMachine) wantMisuse(o fzOutcome, msg string) {
	s, ok := o.v.(string)
	switch {
	case o.goexit:
		m.failf("Goexit; want panic %q", msg)
	case !ok || s != msg:
		m.failf("panic %#v; want %q", o.v, msg)
	case !strings.HasPrefix(s, "workers: "):
		m.failf("panic %q does not start with \"workers: \"", s)
	}
}

func (m *fzMachine) wantNoPanic(o fzOutcome) {
	if o.v != nil || o.goexit {
		m.failf("unexpected panic %v (goexit=%v)", o.v, o.goexit)
	}
}

// ---- the task ----

type fzBoom struct{ id int }

func (b fzBoom) Error() string { return fmt.Sprintf("fuzz boom in copy %d", b.id) }

// fzTask records, for each copy, how often it ran and whether on the caller;
// copies in panicMask panic with fzBoom, copies in exitMask call Goexit.
type fzTask struct {
	name      string
	caller    bool
	callerG   uint64
	inRun     atomic.Bool
	stray     atomic.Int32
	ran       [fzMaxSet]atomic.Int32
	onCaller  [fzMaxSet]atomic.Bool
	panicMask uint8
	exitMask  uint8
	hook      func(id int, onCaller bool) // runs first in each copy, if set
}

func (f *fzTask) Name() string       { return f.name }
func (f *fzTask) CallerCanRun() bool { return f.caller }
func (f *fzTask) Work(id int) {
	if !f.inRun.Load() {
		f.stray.Add(1)
	}
	onCaller := goid.Get() == f.callerG
	f.onCaller[id].Store(onCaller)
	f.ran[id].Add(1)
	if f.hook != nil {
		f.hook(id, onCaller)
	}
	if f.exitMask>>id&1 != 0 {
		runtime.Goexit()
	}
	if f.panicMask>>id&1 != 0 {
		panic(fzBoom{id})
	}
}

func (m *fzMachine) newTask(caller bool, panicMask, exitMask uint8) *fzTask {
	m.made++
	return &fzTask{name: fmt.Sprintf("fz%d", m.made), caller: caller, panicMask: panicMask, exitMask: exitMask}
}

// runChecked makes one run of n copies of task on s with call (Run or RunN)
// on a fresh goroutine and checks it against the model. It assumes the call
// is legal (s open, n in range).
func (m *fzMachine) runChecked(s *fzSet, task *fzTask, n int, call func()) {
	o := fzCall(func() {
		task.callerG = goid.Get()
		task.inRun.Store(true)
		defer task.inRun.Store(false)
		call()
	})
	m.checkRun(s, task, n, o)
}

func (m *fzMachine) checkRun(s *fzSet, task *fzTask, n int, o fzOutcome) {
	inline := task.caller && n == 1
	s.runs++
	if inline {
		s.inline++
	}
	onCaller := 0
	callerExit := false
	var failing []int
	for id := range fzMaxSet {
		r := task.ran[id].Load()
		if id >= n {
			if r != 0 {
				m.failf("task %s, n=%d: copy %d ran %d times; want 0", task.name, n, id, r)
			}
			continue
		}
		if r != 1 {
			m.failf("task %s, n=%d: copy %d ran %d times; want 1", task.name, n, id, r)
			return
		}
		c := task.onCaller[id].Load()
		if c {
			onCaller++
		}
		bit := uint8(1) << id
		if task.exitMask&bit != 0 && c {
			callerExit = true
		}
		if (task.exitMask|task.panicMask)&bit != 0 {
			failing = append(failing, id)
		}
	}
	if st := task.stray.Load(); st != 0 {
		m.failf("task %s: %d copies ran outside their run", task.name, st)
	}
	switch {
	case !task.caller && onCaller != 0:
		m.failf("task %s does not opt in to caller-runs but %d copies ran on the caller", task.name, onCaller)
	case task.caller && onCaller == 0:
		m.failf("task %s, n=%d: caller-runs, but no copy ran on the caller", task.name, n)
	case inline && onCaller != 1:
		m.failf("task %s, n=1, caller-runs: the copy must run inline", task.name)
	}
	// What Stats counts: every copy that returned or panicked; a Goexit on a
	// worker is not counted, and a Goexit on the caller of a dispatched run
	// drops the caller's count for that run (the count is added when Run
	// returns, which it then never does).
	// Worker copies are counted when they start, so a worker's Goexit does
	// not lose one; a caller's Goexit loses the run's caller copies (the
	// count is added when Run returns), so only a bound holds then.
	counted := uint64(n)
	if task.exitMask&(1<<n-1) != 0 {
		s.goexits = true
	}
	s.copies += counted

	// A real panic (not a Goexit) in a copy: Goexit takes priority in Work.
	realPanic := func(id int) bool { return task.panicMask>>id&1 != 0 && task.exitMask>>id&1 == 0 }
	anyReal := false
	for _, id := range failing {
		anyReal = anyReal || realPanic(id)
	}
	if callerExit {
		// The caller's Goexit proceeds once the other copies are done,
		// unless a copy (on a worker, or an earlier one on the caller)
		// panicked: that panic is re-raised, which turns the Goexit into it
		// (panics are never swallowed). Worker Goexits are not re-raised,
		// and the caller's own Goexit is not counted as a panic.
		if !anyReal {
			if !o.goexit {
				m.failf("task %s, n=%d: a caller copy called Goexit but the caller did not exit (outcome %#v)", task.name, n, o.v)
			}
			return
		}
		pe, ok := o.v.(*workers.PanicError)
		counted := 0 // failing copies other than the caller's Goexits
		for _, id := range failing {
			if !(task.onCaller[id].Load() && task.exitMask>>id&1 != 0) {
				counted++
			}
		}
		switch {
		case o.goexit || !ok:
			m.failf("task %s, n=%d: a copy panicked and a caller copy called Goexit; want the panic re-raised, got goexit=%v, %#v", task.name, n, o.goexit, o.v)
		case pe.Goexit || !realPanic(pe.Worker) || pe.OnCaller != task.onCaller[pe.Worker].Load():
			m.failf("task %s, n=%d: re-raised %+v; want a copy's real panic", task.name, n, pe)
		case pe.Panics != counted:
			m.failf("PanicError.Panics = %d; want %d (failing copies, the caller's Goexit aside)", pe.Panics, counted)
		}
		return
	}
	if o.goexit {
		m.failf("task %s, n=%d: the caller exited, but no caller copy called Goexit", task.name, n)
		return
	}
	if len(failing) == 0 {
		if o.v != nil {
			m.failf("task %s, n=%d: unexpected panic %v", task.name, n, o.v)
		}
		return
	}
	pe, ok := o.v.(*workers.PanicError)
	if !ok {
		m.failf("task %s, n=%d, failing copies %v: panic %#v; want *workers.PanicError", task.name, n, failing, o.v)
		return
	}
	isFailing := false
	for _, id := range failing {
		isFailing = isFailing || id == pe.Worker
	}
	exit := task.exitMask>>pe.Worker&1 != 0
	switch {
	case !isFailing:
		m.failf("PanicError names copy %d; the failing copies are %v", pe.Worker, failing)
	case pe.Task != task.name:
		m.failf("PanicError.Task = %q; want %q", pe.Task, task.name)
	case pe.Panics != len(failing):
		m.failf("PanicError.Panics = %d; want %d (copies %v)", pe.Panics, len(failing), failing)
	case pe.OnCaller != task.onCaller[pe.Worker].Load():
		m.failf("PanicError.OnCaller = %v for copy %d; want %v", pe.OnCaller, pe.Worker, !pe.OnCaller)
	case pe.Goexit != exit:
		m.failf("PanicError.Goexit = %v for copy %d; want %v", pe.Goexit, pe.Worker, exit)
	case anyReal && pe.Goexit:
		m.failf("PanicError reports a Goexit (copy %d) although a copy panicked", pe.Worker)
	case !exit && pe.Value != fzBoom{pe.Worker}:
		m.failf("PanicError.Value = %#v; want %#v", pe.Value, fzBoom{pe.Worker})
	case !exit && !errors.Is(pe, fzBoom{pe.Worker}):
		m.failf("errors.Is(PanicError, its value) is false")
	case !strings.Contains(pe.Error(), fmt.Sprintf("task %q copy %d", task.name, pe.Worker)):
		m.failf("PanicError.Error() = %q does not name the task and copy", pe.Error())
	}
}

// ---- ops ----

var fzSpins = []time.Duration{0, time.Microsecond, 20 * time.Microsecond}

// opNew: New with a size and options from the program, some invalid.
func (m *fzMachine) opNew(slot int) {
	a, b := m.next(), m.next()
	name := fmt.Sprintf("fz-%d", m.made)
	m.made++
	max := 1 + int(a)%fzMaxSet
	switch a >> 5 {
	case 6:
		max = 0
	case 7:
		max = []int{-1, tasks.MaxCopies + 1}[a&1]
	}
	var opts []workers.Option
	var want string
	active := max
	// b: bits 0-1 spin (3: none), bits 2-4 active (0: none; 7: invalid, bit 7
	// then picks the bad value), bit 5 nil option, bit 6 negative spin, bit 7
	// WithConcurrentRuns (when active is valid).
	if sp := b & 3; sp < 3 {
		opts = append(opts, workers.WithSpin(fzSpins[sp]))
	}
	concurrent := b&0x80 != 0 && b>>2&7 != 7
	if concurrent {
		opts = append(opts, workers.WithConcurrentRuns())
	}
	switch ac := int(b >> 2 & 7); {
	case ac == 0:
	case ac == 7:
		active = []int{0, max + 1}[b>>7]
		opts = append(opts, workers.WithActiveWorkers(active))
	case max < 1:
		active = ac // New panics for max first
		opts = append(opts, workers.WithActiveWorkers(active))
	default:
		active = 1 + (ac-1)%max
		opts = append(opts, workers.WithActiveWorkers(active))
	}
	nilAt := -1
	if b&0x20 != 0 {
		nilAt = len(opts)
		opts = append(opts, nil)
	}
	m.setCurrent(fmt.Sprintf("New(%q, %d, %d options, active=%d, nil option at %d, negative spin=%v, concurrent=%v)", name, max, len(opts), active, nilAt, b&0x40 != 0, concurrent))
	if b&0x40 != 0 {
		o := fzCall(func() { workers.WithSpin(-time.Duration(1 + int(a))) })
		m.wantMisuse(o, fmt.Sprintf("workers: WithSpin: negative spin budget %v", -time.Duration(1+int(a))))
		return
	}
	switch {
	case max < 1 || max > tasks.MaxCopies:
		want = fmt.Sprintf("workers: New(%q): maxWorkers = %d out of range [1, %d]", name, max, tasks.MaxCopies)
	case nilAt >= 0:
		want = fmt.Sprintf("workers: New(%q): option %d is nil", name, nilAt)
	case active < 1 || active > max:
		want = fmt.Sprintf("workers: New(%q): WithActiveWorkers(%d) out of range [1, %d]", name, active, max)
	}
	var w *workers.Workers
	o := fzCall(func() { w = workers.New(name, max, opts...) })
	if want != "" {
		m.wantMisuse(o, want)
		return
	}
	m.wantNoPanic(o)
	if m.err != nil {
		return
	}
	if old := m.sets[slot]; old != nil {
		if !old.closed {
			old.w.Close()
			old.closed = true
		}
		m.checkStats(old)
	}
	m.sets[slot] = &fzSet{w: w, name: name, max: max, active: active, concurrent: concurrent}
}

// nArg decodes a copy count: mostly in range, sometimes 0, -1 or max+1.
func nArg(b byte, max int) int {
	switch b >> 5 {
	case 7:
		return []int{0, -1, max + 1, max + 2}[b&3]
	default:
		return 1 + int(b)%max
	}
}

func (m *fzMachine) opSetActive(s *fzSet) {
	if s == nil {
		return
	}
	n := nArg(m.next(), s.max)
	m.setCurrent(fmt.Sprintf("%s.SetActiveWorkers(%d) (closed=%v)", s.name, n, s.closed))
	var got int
	o := fzCall(func() { got = s.w.SetActiveWorkers(n) })
	switch {
	case s.closed:
		m.wantMisuse(o, fmt.Sprintf("workers: SetActiveWorkers on %q: set is closed", s.name))
	case n < 1 || n > s.max:
		m.wantMisuse(o, fmt.Sprintf("workers: SetActiveWorkers on %q: n = %d out of range [1, %d]", s.name, n, s.max))
	default:
		m.wantNoPanic(o)
		if got != n {
			m.failf("SetActiveWorkers(%d) = %d", n, got)
		}
		if c := s.w.CreatedWorkers(); c < n {
			m.failf("after SetActiveWorkers(%d), CreatedWorkers = %d", n, c)
		}
		s.active = n
	}
}

// opRun: one Run (useN false) or RunN of a task with random caller-runs,
// panic and Goexit masks, or a nil task.
func (m *fzMachine) opRun(s *fzSet, useN bool) {
	if s == nil {
		return
	}
	a, b, c := m.next(), m.next(), m.next()
	op, n := "Run", s.active
	if useN {
		op, n = "RunN", nArg(a, s.max)
	}
	caller := b&1 != 0
	var panicMask, exitMask uint8
	if b&2 != 0 {
		panicMask = c
	}
	if b&4 != 0 {
		exitMask = c >> 4 & ^panicMask
		if b&8 != 0 {
			exitMask = c // Goexit wins where both are set
		}
	}
	nilTask := b&0xf0 == 0xf0
	task := m.newTask(caller, panicMask, exitMask)
	m.setCurrent(fmt.Sprintf("%s.%s(%s caller=%v panic=%08b exit=%08b nil=%v, n=%d) (closed=%v)",
		s.name, op, task.name, caller, panicMask, exitMask, nilTask, n, s.closed))
	call := func() {
		if useN {
			if nilTask {
				s.w.RunN(nil, n)
			} else {
				s.w.RunN(task, n)
			}
			return
		}
		if nilTask {
			s.w.Run(nil)
		} else {
			s.w.Run(task)
		}
	}
	switch {
	case s.closed: // every call on a closed set panics, whatever its arguments
		m.wantMisuse(fzCall(call), fmt.Sprintf("workers: %s on %q: set is closed", op, s.name))
		for id := range task.ran {
			if task.ran[id].Load() != 0 {
				m.failf("a copy ran on a closed set")
			}
		}
	case nilTask:
		m.wantMisuse(fzCall(call), fmt.Sprintf("workers: %s on %q: nil task", op, s.name))
	case n == 0: // RunN only (Run's n is ActiveWorkers): runs nothing
		if o := fzCall(call); o.v != nil || o.goexit {
			m.failf("%s(n = 0) did not return: %+v", op, o)
		}
		for id := range task.ran {
			if task.ran[id].Load() != 0 {
				m.failf("%s(n = 0) ran copy %d", op, id)
			}
		}
	case n < 0 || n > s.max:
		hint := ""
		if n > s.max && useN {
			hint = "; for more copies than workers use RunContext (any n) or ForRange"
		}
		m.wantMisuse(fzCall(call), fmt.Sprintf("workers: %s on %q: n = %d out of range [0, %d]%s", op, s.name, n, s.max, hint))
	default:
		m.runChecked(s, task, n, call)
	}
}

// opConcurrent: 2-3 goroutines make 1-3 runs each on the same set at once,
// RunN of plain or caller-runs tasks and RunContext with up to twice the
// set's size of ids; every run must complete with its own copies only.
func (m *fzMachine) opConcurrent(s *fzSet) {
	if s == nil {
		return
	}
	a := m.next()
	gs, per := 2+int(a&1), 1+int(a>>1)%3
	m.setCurrent(fmt.Sprintf("%s: %d goroutines x %d runs (closed=%v, concurrent=%v)", s.name, gs, per, s.closed, s.concurrent))
	results := m.submitters(s, gs, per, true)()
	for _, rs := range results {
		for _, r := range rs {
			if s.closed {
				op := "RunN"
				if r.ids != nil {
					op = "RunContext" // a panic names the call the user made
				}
				m.wantMisuse(r.o, fmt.Sprintf("workers: %s on %q: set is closed", op, s.name))
				continue
			}
			if r.ids == nil {
				m.checkRun(s, r.task, r.n, r.o)
				continue
			}
			m.wantNoPanic(r.o)
			if r.err != nil {
				m.failf("RunContext(n=%d): %v", r.n, r.err)
			}
			for id := range r.ids {
				if got := r.ids[id].Load(); got != 1 {
					m.failf("RunContext(n=%d) on a set of %d: id %d ran %d times; want 1", r.n, s.max, id, got)
				}
			}
			// A loop of min(n, max) copies, or of one if it found the set busy.
			k := min(r.n, s.max)
			s.runs++
			if k == 1 {
				s.inline++
			}
			s.copies += uint64(k)
			if s.concurrent {
				s.copySlack += uint64(k - 1)
				if k == 1 {
					s.inlineSlack++
				}
			}
		}
	}
}

// opNested: a run whose copies call the API on the same set (or on the other
// set) from inside. Nested runs on the same set, inline ones included (runs
// never overlap), must panic at once with a clear message; a run on another
// set must work. On a set with concurrent runs, a nested caller-runs run
// runs inline instead; and an inline outer run holds no lock, so every
// nested call from it runs (Close closes the set).
func (m *fzMachine) opNested(s *fzSet) {
	if s == nil || s.closed {
		return
	}
	a, b := m.next(), m.next()
	outerCaller := a&1 != 0
	outerN := 1 + int(a>>1)%s.max
	kind := int(b % 6)
	innerN := 1 + int(b>>3)%s.max
	other := m.sets[0]
	if other == s {
		other = m.sets[1]
	}
	propagate := b&0x80 != 0 // let the nested panic escape the copy
	names := []string{"RunN(plain)", "RunN(caller-runs, n=1)", "RunN(caller-runs)", "Run", "Close", "RunN on the other set"}
	m.setCurrent(fmt.Sprintf("%s: nested %s (innerN=%d) from a run of %d copies, caller=%v, propagate=%v",
		s.name, names[kind], innerN, outerN, outerCaller, propagate))
	if kind == 2 && innerN == 1 {
		kind = 1 // a caller-runs RunN of one copy runs inline
	}
	inner := m.newTask(kind == 1 || kind == 2, 0, 0)
	innerDone := atomic.Int32{}
	var mu sync.Mutex
	innerPanics := map[int]any{} // outer copy id -> what the nested call panicked with
	outer := m.newTask(outerCaller, 0, 0)
	outer.hook = func(id int, onCaller bool) {
		var v any
		func() {
			defer func() { v = recover() }()
			switch kind {
			case 0:
				s.w.RunN(inner, innerN)
			case 1:
				s.w.RunN(inner, 1)
			case 2:
				s.w.RunN(inner, innerN)
			case 3:
				s.w.Run(inner)
			case 4:
				s.w.Close()
			case 5:
				if other != nil {
					other.w.RunN(tasks.Func("other", func(int) { innerDone.Add(1) }), 1+id%other.max)
				}
			}
		}()
		mu.Lock()
		innerPanics[id] = v
		mu.Unlock()
		if propagate && v != nil {
			panic(v)
		}
	}
	o := fzCall(func() {
		outer.callerG = goid.Get()
		outer.inRun.Store(true)
		defer outer.inRun.Store(false)
		s.w.RunN(outer, outerN)
	})
	// The outer run itself must have run each copy once.
	inlineOuter := outerCaller && outerN == 1
	s.runs++
	if inlineOuter {
		s.inline++
	}
	s.copies += uint64(outerN)
	for id := range outerN {
		if r := outer.ran[id].Load(); r != 1 {
			m.failf("outer copy %d ran %d times", id, r)
			return
		}
	}
	var wantPrefix string
	op := map[int]string{0: "RunN", 1: "RunN", 2: "RunN", 3: "Run", 4: "Close"}[kind]
	// Runs on one set never overlap, inline ones included: every nested
	// call on the same set panics, from inline outer copies too. With
	// concurrent runs, nested caller-runs runs run inline, and an inline
	// outer run holds no lock: nothing nested in it panics.
	switch {
	case s.concurrent && inlineOuter:
	case s.concurrent && (kind == 1 || kind == 2):
	case kind <= 4:
		wantPrefix = fmt.Sprintf("workers: %s on %q called from inside a copy ", op, s.name)
	}
	var innerRuns int
	for id := range outerN {
		v := innerPanics[id]
		switch {
		case wantPrefix != "":
			msg, _ := v.(string)
			if !strings.HasPrefix(msg, wantPrefix) {
				m.failf("nested %s from outer copy %d: panic %#v; want a message starting %q", names[kind], id, v, wantPrefix)
			}
		case kind == 5 && other != nil && other.closed:
			want := fmt.Sprintf("workers: RunN on %q: set is closed", other.name)
			if v != want {
				m.failf("RunN on the closed other set: panic %#v; want %q", v, want)
			}
		default:
			if v != nil {
				m.failf("nested %s from outer copy %d: unexpected panic %#v", names[kind], id, v)
			}
			if kind != 4 && kind != 5 {
				innerRuns++
			}
		}
	}
	if kind == 4 && wantPrefix == "" {
		s.closed = true // Close from an inline outer copy on a concurrent set
	}

	if kind == 5 && other != nil && !other.closed {
		want := 0
		for id := range outerN {
			want += 1 + id%other.max
		}
		if got := int(innerDone.Load()); got != want {
			m.failf("runs on the other set from inside copies ran %d copies; want %d", got, want)
		}
		other.runs += uint64(outerN)
		other.copies += uint64(want)
	}
	// Inner runs that were legal ran their copies; count them for Stats.
	if innerRuns > 0 {
		n := innerN
		switch kind {
		case 1:
			n = 1
		case 3:
			n = s.active
		}
		s.runs += uint64(innerRuns)
		if kind == 1 {
			s.inline += uint64(innerRuns)
		}
		s.copies += uint64(innerRuns * n)
		for id := range fzMaxSet {
			want := 0
			if id < n {
				want = innerRuns // one inner task for all the nested runs
			}
			if got := int(inner.ran[id].Load()); got != want {
				m.failf("nested %s: copy %d ran %d times in %d nested runs of %d; want %d", names[kind], id, got, innerRuns, n, want)
			}
		}
	}
	// How the outer run ended.
	anyPanic := false
	for _, v := range innerPanics {
		anyPanic = anyPanic || v != nil
	}
	switch {
	case o.goexit:
		m.failf("the outer caller exited")
	case propagate && anyPanic:
		pe, ok := o.v.(*workers.PanicError)
		if !ok {
			m.failf("outer run: panic %#v; want *workers.PanicError carrying the nested panic", o.v)
			return
		}
		if msg, _ := pe.Value.(string); !strings.HasPrefix(msg, "workers: ") {
			m.failf("outer PanicError.Value = %#v; want the nested call's \"workers: ...\" message", pe.Value)
		}
	default:
		if o.v != nil {
			m.failf("outer run: unexpected panic %#v", o.v)
		}
	}
}

func (m *fzMachine) opClose(s *fzSet) {
	if s == nil {
		return
	}
	m.setCurrent(fmt.Sprintf("%s.Close() (closed=%v)", s.name, s.closed))
	m.wantNoPanic(fzCall(s.w.Close)) // idempotent
	s.closed = true
}

// opCloseRacing: 1-3 goroutines make runs while another closes the set.
// Each run either completes with all its copies or panics "set is closed"
// having run none; Close returns once the run in progress is done.
func (m *fzMachine) opCloseRacing(s *fzSet) {
	if s == nil {
		return
	}
	a := m.next()
	gs, yields := 1+int(a%3), int(a>>2&7)
	m.setCurrent(fmt.Sprintf("%s: Close racing %d goroutines making runs (closed=%v)", s.name, gs, s.closed))
	type result struct {
		task *fzTask
		n    int
		o    fzOutcome
	}
	results := make([]result, gs*2)
	var wg sync.WaitGroup
	for i := range results {
		task, n := m.newTask(i%2 == 1, 0, 0), 1+(int(a)+i)%s.max
		results[i] = result{task: task, n: n}
	}
	for g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range []int{2 * g, 2*g + 1} {
				r := &results[i]
				r.o = fzCall(func() {
					r.task.callerG = goid.Get()
					r.task.inRun.Store(true)
					defer r.task.inRun.Store(false)
					s.w.RunN(r.task, r.n)
				})
			}
		}()
	}
	for range yields {
		runtime.Gosched()
	}
	closeOut := fzCall(s.w.Close)
	wg.Wait()
	m.wantNoPanic(closeOut)
	closedMsg := fmt.Sprintf("workers: RunN on %q: set is closed", s.name)
	for _, r := range results {
		if r.o.v == closedMsg {
			for id := range r.task.ran {
				if c := r.task.ran[id].Load(); c != 0 {
					m.failf("RunN panicked \"set is closed\" but copy %d ran %d times", id, c)
				}
			}
			continue
		}
		if s.closed {
			m.failf("RunN on a set closed before: %#v; want %q", r.o.v, closedMsg)
			continue
		}
		m.checkRun(s, r.task, r.n, r.o)
	}
	s.closed = true
}

// fzHostile is a task whose other methods misbehave too: Name panics, calls
// runtime.Goexit or blocks for a while, or CallerCanRun panics.
type fzHostile struct {
	*fzTask
	kind int
}

func (h *fzHostile) Name() string {
	switch h.kind {
	case 0:
		panic("fz hostile Name")
	case 2:
		runtime.Goexit()
	case 3:
		time.Sleep(time.Millisecond)
	}
	return h.fzTask.Name()
}

func (h *fzHostile) CallerCanRun() bool {
	if h.kind == 1 {
		panic("fz hostile CallerCanRun")
	}
	return h.fzTask.CallerCanRun()
}

// wantNothingRan checks that no copy of task ran.
func (m *fzMachine) wantNothingRan(task *fzHostile) {
	for id := range fzMaxSet {
		if r := task.ran[id].Load(); r != 0 {
			m.failf("copy %d ran %d times; want none", id, r)
		}
	}
}

// opHostile: a run of a task whose Name or CallerCanRun misbehaves while its
// copies panic (as a typed-nil task pointer panics in both Name and Work). Nothing may crash, hang or lose a copy; the panic comes back as a
// *workers.PanicError and the set stays usable.
func (m *fzMachine) opHostile(s *fzSet) {
	if s == nil || s.closed {
		return
	}
	a, b := m.next(), m.next()
	kind := int(a % 4)
	caller := a&4 != 0
	if kind == 2 {
		caller = false // a Goexit in Name on the caller is the caller's own Goexit
	}
	n := 1 + int(a>>3)%s.max
	mask := b | 1 // copy 0 always panics, so the report needs the name
	task := &fzHostile{fzTask: m.newTask(caller, mask, 0), kind: kind}
	names := []string{"Name panics", "CallerCanRun panics", "Name calls Goexit", "Name blocks"}
	m.setCurrent(fmt.Sprintf("%s: hostile task (%s), caller=%v, n=%d, panics=%08b", s.name, names[kind], caller, n, mask))
	o := fzCall(func() {
		task.callerG = goid.Get()
		task.inRun.Store(true)
		defer task.inRun.Store(false)
		s.w.RunN(task, n)
	})
	if m.tracing && kind == 2 && o.goexit {
		// The run's trace region calls Name on the caller first: its
		// Goexit is the caller's own, before anything runs.
		m.wantNothingRan(task)
		return
	}
	pe, ok := o.v.(*workers.PanicError)
	if o.goexit || !ok {
		m.failf("hostile task: outcome %#v (goexit=%v); want *workers.PanicError", o.v, o.goexit)
		return
	}
	if m.tracing && kind == 0 {
		// The run's trace region calls Name before the run starts: its
		// panic is the run's report; nothing ran, nothing is counted.
		if pe.Method != "Name" || pe.Value != "fz hostile Name" {
			m.failf("Name panic with tracing on reported as %+v", pe)
		}
		m.wantNothingRan(task)
		return
	}
	if kind == 1 {
		// Asked before the run starts: nothing ran, nothing is counted.
		if pe.Method != "CallerCanRun" || pe.Value != "fz hostile CallerCanRun" {
			m.failf("CallerCanRun panic reported as %+v", pe)
		}
		for id := range fzMaxSet {
			if r := task.ran[id].Load(); r != 0 {
				m.failf("copy %d ran %d times after CallerCanRun panicked", id, r)
			}
		}
		return
	}
	for id := range fzMaxSet {
		want := int32(0)
		if id < n {
			want = 1
		}
		if r := task.ran[id].Load(); r != want {
			m.failf("hostile task, n=%d: copy %d ran %d times; want %d", n, id, r, want)
		}
	}
	if _, isBoom := pe.Value.(fzBoom); !isBoom {
		m.failf("hostile task: PanicError.Value = %#v; want a copy's fzBoom", pe.Value)
	}
	wantName := map[int]string{0: "<Name panicked: fz hostile Name>", 2: "?", 3: task.name}[kind]
	if pe.Task != wantName {
		m.failf("hostile task: PanicError.Task = %q; want %q", pe.Task, wantName)
	}
	s.runs++
	if caller && n == 1 {
		s.inline++
	}
	s.copies += uint64(n)
}

// fzResult is one run a submitter made.
type fzResult struct {
	task *fzTask
	n    int
	ids  []atomic.Int32 // RunContext's ids (nil for RunN)
	err  error          // RunContext's error
	o    fzOutcome
}

// fzRunN makes one RunN of task on s from a fresh goroutine, as the task's
// caller.
func fzRunN(s *fzSet, task *fzTask, n int) fzOutcome {
	return fzCall(func() {
		task.callerG = goid.Get()
		task.inRun.Store(true)
		defer task.inRun.Store(false)
		s.w.RunN(task, n)
	})
}

// submitters starts gs goroutines that make per runs each on s, back to
// back, with tasks and copy counts from the program: RunN of caller-runs or
// plain tasks with n in range, and, with withContext, RunContext calls of up
// to twice the set's size of ids. The returned function waits for them and
// returns their runs.
func (m *fzMachine) submitters(s *fzSet, gs, per int, withContext bool) (wait func() [][]fzResult) {
	results := make([][]fzResult, gs)
	var wg sync.WaitGroup
	for g := range gs {
		params := make([]byte, per)
		for i := range params {
			params[i] = m.next()
		}
		ts := make([]*fzTask, per)
		for i := range ts {
			ts[i] = m.newTask(params[i]&0x80 != 0, 0, 0)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, p := range params {
				r := fzResult{task: ts[i], n: 1 + int(p)%s.max}
				if withContext && p&0x40 != 0 { // RunContext, any n
					r.n = 1 + int(p&0x3f)%(2*s.max)
					r.ids = make([]atomic.Int32, r.n)
					r.o = fzCall(func() {
						r.err = s.w.RunContext(context.Background(), r.n, func(_ context.Context, id int) error {
							r.ids[id].Add(1)
							return nil
						})
					})
				} else {
					r.o = fzRunN(s, r.task, r.n)
				}
				results[g] = append(results[g], r)
			}
		}()
	}
	return func() [][]fzResult {
		wg.Wait()
		return results
	}
}

// ---- workerless cycles, nested releases, contention, waits with a context, tracing ----

// fzOther returns the program's set other than s, if it is open.
func (m *fzMachine) fzOther(s *fzSet) *fzSet {
	o := m.sets[0]
	if o == s {
		o = m.sets[1]
	}
	if o == nil || o == s || o.closed {
		return nil
	}
	return o
}

// opCycle: goroutine X holds s with an inline run whose copy runs on the
// other set, which goroutine Y holds with an inline run whose copy runs on s.
// Whether or not the sets have workers, at least one of the nested calls
// must panic naming both sets; neither may hang; a nested call that does not
// panic runs once the other side's outer run is over. With concurrent runs on
// either set the inline runs there take no lock, and every call completes.
func (m *fzMachine) opCycle(s *fzSet) {
	if s == nil || s.closed {
		return
	}
	o := m.fzOther(s)
	if o == nil {
		return
	}
	a := m.next()
	rx, ry := cycleRunners[a%4], cycleRunners[a>>2%4] // each an inline run

	m.setCurrent(fmt.Sprintf("cycle: %s.%s -> %s.%s -> %s (created %d, %d)", s.name, rx.name, o.name, ry.name, s.name,
		s.w.CreatedWorkers(), o.w.CreatedWorkers()))
	var inS, inO sync.WaitGroup
	inS.Add(1)
	inO.Add(1)
	var vx, vy any
	var wg sync.WaitGroup
	side := func(outer, inner *fzSet, r cycleRunner, mine, theirs *sync.WaitGroup, v *any) {
		defer wg.Done()
		r.run(outer.w, func() {
			mine.Done()
			theirs.Wait()
			func() {
				defer func() { *v = recover() }()
				r.run(inner.w, func() {})
			}()
		})
	}
	wg.Add(2)
	go side(s, o, rx, &inS, &inO, &vx)
	go side(o, s, ry, &inO, &inS, &vy)
	wg.Wait()
	// On a set with concurrent runs these runs take no lock (one
	// caller-runs copy each), so no cycle forms through it: every call
	// must then complete.
	lockFree := s.concurrent || o.concurrent
	if !lockFree && vx == nil && vy == nil {
		m.failf("cycle through %s and %s: neither nested call panicked", s.name, o.name)
	}
	for _, v := range []any{vx, vy} {
		if v == nil {
			continue
		}
		if lockFree {
			m.failf("runs through a set with concurrent runs: unexpected panic %#v", v)
			continue
		}
		msg, _ := v.(string)
		if !strings.Contains(msg, "would deadlock") || !strings.Contains(msg, fmt.Sprintf("%q", s.name)) ||
			!strings.Contains(msg, fmt.Sprintf("%q", o.name)) {
			m.failf("cycle: panic %#v; want a message naming %q and %q", v, s.name, o.name)
		}
	}
	for _, st := range []*fzSet{s, o} { // the outer runs
		st.runs++
		st.inline++
		st.copies++
	}
	// A nested run that ran is inline, but it may be a busy run for a loop
	// (every runner but RunN's) on a set with concurrent runs whose outer
	// run is a loop too: that outer loop holds the set while it runs (a loop
	// that finds the set free takes it), so a nested loop that comes while
	// it runs finds the set busy; one that comes after it finds it free.
	loopX, loopY := a%4 != 0, a>>2%4 != 0
	nested := func(t *fzSet, inner, outer bool) {
		t.runs++
		t.copies++
		t.inline++
		if t.concurrent && inner && outer {
			t.inlineSlack++
		}
	}
	if vx == nil { // X's nested run on o ran (runner rx; o's outer is ry)
		nested(o, loopX, loopY)
	}
	if vy == nil {
		nested(s, loopY, loopX)
	}
}

var fzSharedSeq atomic.Int64

// opNestedRelease: the last release of a shared set from a copy nested in
// its run (directly, or through a run on s, plain or inline) must panic
// consuming nothing; the set then still works and the release closes it.
// From inside a run that takes no lock (one caller-runs copy on the shared
// set, which has concurrent runs) it closes the set.
func (m *fzMachine) opNestedRelease(s *fzSet) {
	a := m.next()
	kind := int(a % 4) // 0 direct, 1 direct from a lock-free inline run, 2 and 3 through s (plain or inline)
	if (kind >= 2) && (s == nil || s.closed) {
		kind -= 2
	}
	name := fmt.Sprintf("fz-shared-%d", fzSharedSeq.Add(1))
	max := 1 + int(a>>2)%3
	m.setCurrent(fmt.Sprintf("nested last release of %s (max %d), kind %d", name, max, kind))
	before := workers.SharedSets()
	sh, rel := workers.Acquire(name, max)
	wrap := func(caller bool, t tasks.Task) tasks.Task {
		if caller {
			return tasks.CallerRuns(t)
		}
		return t
	}
	var v any
	release := func() {
		defer func() { v = recover() }()
		rel()
	}
	innerCaller := a&0x40 != 0
	o := fzCall(func() {
		sh.RunN(wrap(kind == 1, tasks.Func("fz-rel-outer", func(int) {
			if kind < 2 {
				release()
				return
			}
			func() {
				defer func() { _ = recover() }() // the inner run reports nothing: release recovers
				s.w.RunN(wrap(innerCaller, tasks.Func("fz-rel-inner", func(int) { release() })), 1)
			}()
		})), 1)
	})
	m.wantNoPanic(o)
	if kind >= 2 {
		s.runs++
		if innerCaller {
			s.inline++
		}
		s.copies++
	}
	if kind == 1 {
		// A shared set has concurrent runs: its run of one caller-runs
		// copy takes no lock and uses no worker, so a last release from
		// inside it closes the set, as Close would.
		if v != nil {
			m.failf("last release inside a lock-free inline run: panic %#v; want none", v)
		}
		if got := workers.SharedSets(); got != before {
			m.failf("after the release: %d shared names; want %d", got, before)
		}
		return
	}
	want := fmt.Sprintf(`workers: last release of shared set %q called from inside one of its own copies (directly or through nested runs on other sets): it would close the set during its own run; release it after the run`, name)
	if v != want {
		m.failf("nested last release: panic %#v; want %q", v, want)
	}
	if got := workers.SharedSets(); got != before+1 {
		m.failf("after a refused release: %d shared names; want %d", got, before+1)
	}
	ran := atomic.Int32{}
	m.wantNoPanic(fzCall(func() { sh.RunN(tasks.Func("fz-rel-after", func(int) { ran.Add(1) }), max) }))
	if ran.Load() != int32(max) {
		m.failf("shared set after a refused release ran %d copies; want %d", ran.Load(), max)
	}
	m.wantNoPanic(fzCall(rel))
	if got := workers.SharedSets(); got != before {
		m.failf("after the release: %d shared names; want %d", got, before)
	}
}

// opContended: 1-2 goroutines make short runs on s back to back while a copy
// on the other set (plain or inline) runs on s: the nested waiter queues
// with them and every run completes with its copies once.
func (m *fzMachine) opContended(s *fzSet) {
	if s == nil || s.closed {
		return
	}
	o := m.fzOther(s)
	if o == nil {
		return
	}
	a, b := m.next(), m.next()
	loopers, each := 1+int(a&1), 1+int(a>>1)%6
	outerCaller := a&0x80 != 0
	innerN := 1 + int(b)%s.max
	inner := m.newTask(b&0x80 != 0, 0, 0)
	m.setCurrent(fmt.Sprintf("%s: %d loopers x %d runs while a copy on %s (caller=%v) runs %s n=%d", s.name, loopers, each,
		o.name, outerCaller, inner.name, innerN))
	wait := m.submitters(s, loopers, each, false)
	var innerO fzOutcome
	var outerT tasks.Task = tasks.Func("fz-contended-outer", func(int) {
		innerO = fzRunN(s, inner, innerN)
	})
	if outerCaller {
		outerT = tasks.CallerRuns(outerT)
	}
	m.wantNoPanic(fzCall(func() { o.w.RunN(outerT, 1) }))
	results := wait()
	o.runs++
	if outerCaller {
		o.inline++
	}
	o.copies++
	m.checkRun(s, inner, innerN, innerO)
	for _, rs := range results {
		for _, r := range rs {
			m.checkRun(s, r.task, r.n, r.o)
		}
	}
}

// opCtxWait: s is held by a run; a RunContext or ForRangeContext (from a
// plain goroutine or nested in a copy on the other set) waits for it and its
// context is cancelled, once it is queued or after a short delay. It must
// return the cause without running anything, while s is still held; the
// wait is counted in Stats.
func (m *fzMachine) opCtxWait(s *fzSet) {
	if s == nil || s.closed {
		return
	}
	a, b := m.next(), m.next()
	kind := int(a % 4) // RunContext, ForRangeContext, ForRangeContext caller-runs, RunContext n=1
	nested := a&4 != 0
	queued := a&8 != 0 // cancel once queued, else after a delay
	delay := time.Duration(b) * time.Microsecond
	o := m.fzOther(s)
	if o == nil {
		nested = false
	}
	holdCaller := a&0x10 != 0
	if s.concurrent {
		// Caller-runs runs never wait on such a set (they run on their
		// caller when it is busy), and an inline one takes no lock: hold
		// it with a plain run, and wait with a workers-only loop.
		holdCaller, kind = false, 1
	}
	n := 1 + int(b)%s.max
	if kind == 3 {
		n = 1
	}
	m.setCurrent(fmt.Sprintf("%s: held; context kind %d n=%d nested=%v queued=%v delay=%v", s.name, kind, n, nested, queued, delay))
	hold := m.newTask(holdCaller, 0, 0)
	holding, release := make(chan struct{}), make(chan struct{})
	hold.hook = func(int, bool) {
		close(holding)
		<-release
	}
	holdDone := make(chan fzOutcome, 1)
	go func() { holdDone <- fzRunN(s, hold, 1) }()
	<-holding
	before := s.w.Stats().Waits
	errCause := errors.New("fz: cancelled while waiting")
	ctx, cancel := context.WithCancelCause(context.Background())
	var ran atomic.Int32
	call := func() error {
		switch kind {
		case 0, 3:
			return s.w.RunContext(ctx, n, func(context.Context, int) error { ran.Add(1); return nil })
		case 1:
			return s.w.ForRangeContext(ctx, 64, func(context.Context, int, int, int) error { ran.Add(1); return nil },
				workers.WithCopies(n), workers.WithWorkersOnly())
		default:
			return s.w.ForRangeContext(ctx, 64, func(context.Context, int, int, int) error { ran.Add(1); return nil },
				workers.WithCopies(n))
		}
	}
	errc := make(chan error, 1)
	var outerO fzOutcome
	outerDone := make(chan struct{})
	go func() {
		defer close(outerDone)
		if nested {
			outerO = fzCall(func() { o.w.RunN(tasks.Func("fz-ctx-outer", func(int) { errc <- call() }), 1) })
		} else {
			outerO = fzCall(func() { errc <- call() })
		}
	}()
	if queued {
		for workers.Queued(s.w) == 0 {
			time.Sleep(20 * time.Microsecond)
		}
	} else {
		time.Sleep(delay)
	}
	cancel(errCause)
	err := <-errc
	<-outerDone
	m.wantNoPanic(outerO)
	if err != errCause {
		m.failf("a run whose context was cancelled while it waited returned %v; want its cause", err)
	}
	if r := ran.Load(); r != 0 {
		m.failf("a run whose context was cancelled while it waited ran %d copies or chunks", r)
	}
	waits := s.w.Stats().Waits - before
	if waits > 1 || queued && waits != 1 {
		m.failf("Stats counts %d waits; want %s", waits, map[bool]string{true: "1", false: "0 or 1"}[queued])
	}
	close(release)
	m.checkRun(s, hold, 1, <-holdDone)
	if nested {
		o.runs++
		o.copies++
	}
}

// opTrace toggles runtime/trace for the rest of the program (off again when
// it ends): with tracing on, Name is called for every run's and copy's region.
func (m *fzMachine) opTrace() {
	m.setCurrent(fmt.Sprintf("tracing %v -> %v", m.tracing, !m.tracing))
	if m.tracing {
		trace.Stop()
		m.tracing = false
		return
	}
	if trace.IsEnabled() {
		return // someone else traces
	}
	if err := trace.Start(io.Discard); err == nil {
		m.tracing = true
	}
}

// opHostileCtx: a RunContext (any n) or ForRangeContext under a parent
// context whose Err, Done, Value or Deadline panics or calls runtime.Goexit,
// a parent never done, live, done before the call or during it, with copies
// that use their context or leave it alone. The call must return, or end
// with that misbehaviour (a panic or Goexit, or a copy's
// *workers.PanicError); a call that returned ran every id (every iteration
// of a loop that returned nil) once, and no more; and the next run on the
// set runs normally.
func (m *fzMachine) opHostileCtx(s *fzSet) {
	if s == nil || s.closed {
		return
	}
	a, b := m.next(), m.next()
	method := []string{"Err", "Done", "Value", "Deadline"}[a%4]
	state := []string{"never done", "live", "done before", "done during"}[a>>3%4]
	h := newHostileCtx(method, a&4 != 0, state)
	loop, touch := a&0x20 != 0, a&0x40 != 0
	n := 1 + int(b)%(2*s.max)
	k := min(n, s.max) // the copies a run makes
	m.setCurrent(fmt.Sprintf("%s: hostile parent (%s, goexit=%v, %s), loop=%v, touch=%v, n=%d", s.name, h.method, h.goexit, state, loop, touch, n))
	ran := make([]atomic.Int32, n)
	fn := h.copyFunc(state, touch, ran)
	before := s.w.Stats()
	var err error
	o := testutil.Call(func() {
		if loop {
			err = s.w.ForRangeContext(h, n, func(ctx context.Context, _, lo, _ int) error { return fn(ctx, lo) },
				workers.WithChunk(1), workers.WithCopies(k))
			return
		}
		err = s.w.RunContext(h, n, fn)
	})
	if !o.Returned() && !h.caused(o) {
		m.failf("ended with %+v; want a return or the parent's own misbehaviour", o)
	}
	started := false
	for id := range ran {
		r := ran[id].Load()
		started = started || r != 0
		if r > 1 || o.Returned() && r != 1 && (!loop || err == nil) {
			m.failf("id %d ran %d times (returned %v, error %v)", id, r, o.Returned(), err)
		}
	}
	// Whether the run started depends on where the parent misbehaved (a
	// run that started and returned or panicked ran copies); the model
	// follows Stats, which must count it as a run of k copies or not at
	// all.
	after := s.w.Stats()
	runs, inline := after.Runs-before.Runs, after.InlineRuns-before.InlineRuns
	switch {
	case runs > 1 || started && runs == 0:
		m.failf("Stats counts %d runs; ids ran: %v", runs, started)
	case runs == 1 && inline != map[bool]uint64{true: 1, false: 0}[k == 1]:
		m.failf("Stats counts %d inline runs for a run of %d copies", inline, k)
	case runs == 1:
		s.runs++
		s.inline += inline
		s.copies += uint64(k)
		// A copy's Goexit on the caller loses the caller's count; the
		// loop's drain may run more copies.
		s.goexits = s.goexits || h.goexit
		s.loopExits = s.loopExits || h.goexit
	}
	m.checkNextRun(s)
}

// checkNextRun checks that a plain RunContext on s runs every id once.
func (m *fzMachine) checkNextRun(s *fzSet) {
	ran := make([]atomic.Int32, s.max)
	var err error
	o := fzCall(func() {
		err = s.w.RunContext(context.Background(), s.max, func(ctx context.Context, id int) error {
			ran[id].Add(1)
			return ctx.Err()
		})
	})
	m.wantNoPanic(o)
	if err != nil {
		m.failf("the next RunContext returned %v", err)
	}
	for id := range ran {
		if r := ran[id].Load(); r != 1 {
			m.failf("the next RunContext ran id %d %d times; want 1", id, r)
		}
	}
	s.runs++
	if s.max == 1 {
		s.inline++
	}
	s.copies += uint64(s.max)
}
