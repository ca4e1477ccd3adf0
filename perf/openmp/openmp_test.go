package openmp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/team"
	"github.com/workgang/workgang/workers"
)

// TestMain checks for leaked goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// refKernel is the xorshift chain written out separately, to check that
// kernel computes the chain (and so cannot have been folded into something
// else).
func refKernel(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func TestKernelComputesTheChain(t *testing.T) {
	seen := map[uint64]int{}
	for _, n := range []int{0, 1, 2, 3, 50, 1000} {
		x := uint64(n)*kernelSeedMul | 1
		got, want := kernel(x, n), refKernel(x, n)
		if got != want {
			t.Errorf("kernel(%#x, %d) = %#x; want %#x", x, n, got, want)
		}
		if m, dup := seen[got]; dup {
			t.Errorf("kernel gives %#x for n = %d and n = %d", got, m, n)
		}
		seen[got] = n
	}
}

// bestOf returns the least of k timings of work(n).
func bestOf(k, n int) time.Duration {
	best := time.Duration(math.MaxInt64)
	for range k {
		start := time.Now()
		work(n)
		best = min(best, time.Since(start))
	}
	return best
}

// TestKernelCalibrationIsSane checks the calibration against what a
// dependent chain of shifts and xors can cost, and that the work grows with
// its count (a folded or hoisted kernel would cost the same at any count).
// The bounds are wide: the machine may be busy; a best-of-several timing
// is disturbed only if every one of them is.
func TestKernelCalibrationIsSane(t *testing.T) {
	ns := calibrateKernel()
	// Three dependent shift-xor pairs take at least 3 cycles (~0.5 ns at 6
	// GHz); 50 ns per iteration would be a machine too loaded to measure.
	if ns < 0.5 || ns > 50 {
		t.Fatalf("calibrateKernel() = %.3f ns/iteration; want within [0.5, 50]", ns)
	}
	small, large := bestOf(7, 1<<14), bestOf(7, 1<<18)
	if r := float64(large) / float64(small); r < 4 {
		t.Errorf("16x the iterations took %.1fx the time (%v vs %v); want at least 4x: the loop does not scale with its count", r, large, small)
	}
	if got := itersFor(100, ns); math.Abs(float64(got)*ns-100) > ns/2+1e-9 {
		t.Errorf("itersFor(100, %.3f) = %d: %.1f ns, want the nearest count to 100 ns", ns, got, float64(got)*ns)
	}
	if got := itersFor(0.001, ns); got != 1 {
		t.Errorf("itersFor(0.001, %.3f) = %d; want 1", ns, got)
	}
}

// goodOutput returns an epcc output of rounds rounds for every construct
// and grain, with overhead ns = 100*(round+1) + construct index.
func goodOutput(rounds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epcc runtime=201511 threads=2 rounds=%d\n", rounds)
	b.WriteString("calib ns_per_iter=2.0154 delay_iters=50 delay_ns=100.8\n")
	for r := range rounds {
		for i, c := range constructs {
			fmt.Fprintf(&b, "overhead construct=%s round=%d reps=10 test_ns=1.0 ref_ns=1.0 ns=%d.5\n", c.name, r, 100*(r+1)+i)
		}
	}
	for r := range rounds {
		for _, w := range grainsNS {
			fmt.Fprintf(&b, "grain w_ns=%g round=%d reps=10 serial_ns=%g parallel_ns=%g\n", w, r, w, w/1.5)
		}
	}
	b.WriteString("done\n")
	return b.String()
}

func TestParseNative(t *testing.T) {
	n, err := parseNative(strings.NewReader(goodOutput(3)))
	if err != nil {
		t.Fatalf("parseNative(good output): %v", err)
	}
	if n.version != 201511 || n.threads != 2 || n.rounds != 3 || n.delayIters != 50 || n.nsPerIter != 2.0154 {
		t.Errorf("header: got version %d threads %d rounds %d delay %d ns/iter %v; want 201511 2 3 50 2.0154",
			n.version, n.threads, n.rounds, n.delayIters, n.nsPerIter)
	}
	if got, want := n.overhead["barrier"], []float64{103.5, 203.5, 303.5}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("barrier: got %v; want %v", got, want)
	}
	if got := n.serial[1000][2] / n.parallel[1000][2]; math.Abs(got-1.5) > 1e-9 {
		t.Errorf("grain 1000 speedup: got %v; want 1.5", got)
	}
}

func TestParseNativeRejects(t *testing.T) {
	good := goodOutput(2)
	cases := []struct {
		name, out, want string
	}{
		{"empty", "", "no \"done\""},
		{"truncated", good[:strings.LastIndex(good[:len(good)/2], "\n")+1], "no \"done\""},
		{"cut mid-line", good[:strings.Index(good, " ns=")], "missing field \"ns\""},
		{"no header", strings.SplitN(good, "\n", 2)[1], "no epcc or calib"},
		{"missing round", strings.Replace(good, "overhead construct=parallel round=1 ", "overhead construct=parallel round=2 ", 1), "round 2 after 1"},
		{"missing construct", strings.Replace(good, "construct=reduction", "construct=other", 2), "construct reduction has 0 rounds"},
		{"unknown kind", strings.Replace(good, "done", "bogus x=1\ndone", 1), "unknown line kind"},
		{"bad number", strings.Replace(good, "ns_per_iter=2.0154", "ns_per_iter=fast", 1), "not a number"},
		{"not key=value", strings.Replace(good, "threads=2", "threads", 1), "not key=value"},
		{"duplicate field", strings.Replace(good, "threads=2", "threads=2 threads=3", 1), "given twice"},
		{"zero time", strings.Replace(good, "parallel_ns=", "parallel_ns=0 x=", 1), "want positive"},
		{"after done", good + "calib ns_per_iter=1 delay_iters=1 delay_ns=1\n", "after done"},
	}
	for _, c := range cases {
		_, err := parseNative(strings.NewReader(c.out))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v; want one containing %q", c.name, err, c.want)
		}
	}
}

// TestEpccBuildsAndRuns builds epcc.c with every compiler that has OpenMP
// support here, runs it at a small size and parses its output. A missing
// compiler or OpenMP runtime skips that compiler (the section reports it the
// same way).
func TestEpccBuildsAndRuns(t *testing.T) {
	for _, c := range compilers {
		t.Run(c.runtime, func(t *testing.T) {
			if _, err := exec.LookPath(c.cc); err != nil {
				t.Skipf("%s not installed (%s)", c.cc, installHint)
			}
			bin, err := build(context.Background(), c, t.TempDir())
			if err != nil {
				t.Skipf("no OpenMP support: %v", err)
			}
			p := params{threads: 2, rounds: 2, target: 20 * time.Microsecond, delayNS: 100}
			p.timeout = nativeTimeout(p)
			n, err := runNative(context.Background(), bin, p)
			if err != nil {
				t.Fatal(err)
			}
			if n.threads != 2 || n.rounds != 2 || n.version < 200505 {
				t.Errorf("got threads %d rounds %d _OPENMP %d; want 2, 2, at least 200505", n.threads, n.rounds, n.version)
			}
			if math.Abs(float64(n.delayIters)*n.nsPerIter-100) > n.nsPerIter {
				t.Errorf("delay %d iterations at %.3f ns: want about 100 ns", n.delayIters, n.nsPerIter)
			}
		})
	}
}

// TestEpccRejectsBadArguments checks that a misused binary fails instead of
// printing figures.
func TestEpccRejectsBadArguments(t *testing.T) {
	c := compilers[0]
	if _, err := exec.LookPath(c.cc); err != nil {
		t.Skipf("%s not installed", c.cc)
	}
	bin, err := build(context.Background(), c, t.TempDir())
	if err != nil {
		t.Skipf("no OpenMP support: %v", err)
	}
	for _, args := range [][]string{{}, {"0", "1", "10", "100"}, {"2", "1", "10", "-1"}} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err == nil {
			t.Errorf("epcc %q: succeeded with %q; want an error", args, out)
		}
	}
}

// fakeTeam is a team for the RunTeam hook built from plain goroutines: n
// goroutines, a barrier of a mutex and a condition variable, and a static
// block split for For. It stands in for the runtime's own teams so that
// the team modes' code paths are tested.
type fakeTeam struct {
	n     int
	mu    sync.Mutex
	cond  *sync.Cond
	count int
	phase int
}

type fakeMember struct {
	t  *fakeTeam
	id int
}

func fakeRunTeam(_ *workers.Workers, _ string, n int, fn func(m Member)) {
	t := &fakeTeam{n: n}
	t.cond = sync.NewCond(&t.mu)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(&fakeMember{t: t, id: i})
		}()
	}
	wg.Wait()
}

func (m *fakeMember) ID() int { return m.id }

func (m *fakeMember) Barrier() {
	t := m.t
	t.mu.Lock()
	defer t.mu.Unlock()
	phase := t.phase
	if t.count++; t.count == t.n {
		t.count, t.phase = 0, phase+1
		t.cond.Broadcast()
		return
	}
	for t.phase == phase {
		t.cond.Wait()
	}
}

func (m *fakeMember) For(n int, body func(lo, hi int), _ Schedule) {
	per := (n + m.t.n - 1) / m.t.n
	lo, hi := min(n, m.id*per), min(n, (m.id+1)*per)
	if lo < hi {
		body(lo, hi)
	}
	m.Barrier()
}

// tinyOptions are the smallest sizes: the structure is tested, not the
// figures.
func tinyOptions() Options {
	return Options{Threads: 2, Rounds: 2, Target: 20 * time.Microsecond,
		Mixed: MixedOptions{Batch: 2, Batches: 3, WorkNS: []float64{200, 2000}}}
}

// withoutCompilers runs f with no OpenMP compiler to find.
func withoutCompilers(t *testing.T) {
	saved := compilers
	compilers = []compiler{{runtime: "libnone", cc: "no-such-compiler-for-the-openmp-test"}}
	t.Cleanup(func() { compilers = saved })
}

func TestRunWithoutCompiler(t *testing.T) {
	withoutCompilers(t)
	var out bytes.Buffer
	res, err := Run(context.Background(), &out, tinyOptions())
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"libnone", "skipped", installHint, "PARALLEL", "not expressible", "grain sweep", "RunN caller-runs"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if len(res.Runtimes) != 2 || res.Runtimes[0].Skipped == "" || res.Runtimes[1].Name != workgang {
		t.Fatalf("runtimes: got %+v; want libnone skipped, then workgang", res.Runtimes)
	}
	if len(res.Constructs) != len(constructs) {
		t.Fatalf("got %d constructs; want %d", len(res.Constructs), len(constructs))
	}
	for _, c := range res.Constructs {
		if len(c.Rows) == 0 {
			t.Errorf("%s: no rows", c.Name)
		}
		for _, row := range c.Rows {
			if row.Ratio != nil {
				t.Errorf("%s %s: ratio %v without an OpenMP runtime; want none", c.Name, row.Mode, *row.Ratio)
			}
			if (row.MedianNS == nil) != (row.Note != "") || (row.MedianNS != nil && len(row.RoundsNS) != 2) {
				t.Errorf("%s %s: median %v, note %q, %d rounds: want a figure of 2 rounds or a reason", c.Name, row.Mode, row.MedianNS, row.Note, len(row.RoundsNS))
			}
		}
	}
	// The team constructs run on workgang's teams (teamhook.go).
	for _, name := range []string{"for", "barrier", "static_8", "dynamic_1", "guided_8"} {
		if row := rowOf(res, name, modeTeam); row == nil || row.MedianNS == nil {
			t.Errorf("%s: team row %+v; want a figure", name, row)
		}
	}
	if WithGuided == nil {
		if got := rowOf(res, "guided_8", rangeModeNames[0]); got == nil || got.Note != noGuided {
			t.Errorf("guided ForRange row: got %+v; want not expressible: %s", got, noGuided)
		}
	}
	if len(res.Grain.Rows) != 4 {
		t.Errorf("got %d grain rows; want 4 (RunN and ForRange, two modes each)", len(res.Grain.Rows))
	}
	for _, row := range res.Grain.Rows {
		for i, s := range row.Speedup {
			if !(s > 0) || row.Min[i] > s || s > row.Max[i] {
				t.Errorf("grain %s: speedup %v within [%v, %v] at %g ns; want positive, within min-max", row.Mode, s, row.Min[i], row.Max[i], res.Grain.GrainsNS[i])
			}
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"median_ns":null`)) || !bytes.Contains(b, []byte(`"ratio_to_best_openmp"`)) {
		t.Errorf("JSON lacks a null median or the ratios: %s", b)
	}
	dir := t.TempDir()
	path, err := Plot(res, dir, "caption")
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("grain sweep")) {
		t.Errorf("%s is not the figure: %.200s", path, svg)
	}
	if bytes.Contains(svg, []byte("withheld")) != (res.withheld != "") {
		t.Errorf("the figure says withheld: %v; the section withheld its comparisons: %q", bytes.Contains(svg, []byte("withheld")), res.withheld)
	}
	// As a loaded machine leaves it: every panel's title says the
	// comparisons were withheld.
	others := float64(runtime.NumCPU())
	res.withheld, res.OthersCPUs = "loaded", &others
	if path, err = Plot(res, dir, "caption"); err != nil {
		t.Fatal(err)
	}
	if svg, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(svg, []byte("(verdict withheld: other programs used 100% of the CPUs)")); n != 3 {
		t.Errorf("the note is in %d titles; want 3 (grain, overheads, mixed)", n)
	}
}

// rowOf returns the row of construct name and mode, or nil.
func rowOf(r *Result, name, mode string) *Row {
	for _, c := range r.Constructs {
		if c.Name != name {
			continue
		}
		for i := range c.Rows {
			if c.Rows[i].Mode == mode {
				return &c.Rows[i]
			}
		}
	}
	return nil
}

// TestHooks plugs a team runtime and a guided option in and checks that the
// constructs they enable are measured.
func TestHooks(t *testing.T) {
	withoutCompilers(t)
	savedTeam, savedGuided := RunTeam, WithGuided
	t.Cleanup(func() { RunTeam, WithGuided = savedTeam, savedGuided })
	RunTeam = fakeRunTeam
	WithGuided = workers.WithChunk // a stand-in: any valid option
	res, err := Run(context.Background(), &bytes.Buffer{}, tinyOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"for", "barrier", "static", "static_8", "dynamic_1", "guided_8"} {
		if row := rowOf(res, name, modeTeam); row == nil || row.MedianNS == nil {
			t.Errorf("%s: team row %+v; want a figure", name, row)
		}
	}
	if row := rowOf(res, "guided_8", rangeModeNames[0]); row == nil || row.MedianNS == nil {
		t.Errorf("guided_8: ForRange row %+v; want a figure", row)
	}
}

func TestTeamSchedule(t *testing.T) {
	for _, c := range []struct {
		in   Schedule
		want team.Schedule
	}{
		{Schedule{Static, 0}, team.Static()},
		{Schedule{StaticChunk, 8}, team.StaticChunk(8)},
		{Schedule{Dynamic, 1}, team.Dynamic(1)},
		{Schedule{Guided, 8}, team.Guided(8)},
	} {
		if got := teamSchedule(c.in); got != c.want {
			t.Errorf("teamSchedule(%+v) = %+v; want %+v", c.in, got, c.want)
		}
	}
}

// TestTeamHookRunsATeam checks the hook against workgang's teams: every
// member runs, on distinct goroutines at the same time (a barrier among them
// returns), and For covers the loop once.
func TestTeamHookRunsATeam(t *testing.T) {
	w := workers.New("openmp-test", 2)
	defer w.Close()
	var mu sync.Mutex
	ids := map[int]bool{}
	hits := make([]int, 100)
	RunTeam(w, "test", 2, func(m Member) {
		mu.Lock()
		ids[m.ID()] = true
		mu.Unlock()
		m.Barrier()
		m.For(len(hits), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				hits[i]++
			}
		}, Schedule{Dynamic, 7})
	})
	if len(ids) != 2 || !ids[0] || !ids[1] {
		t.Errorf("member ids: got %v; want 0 and 1", ids)
	}
	for i, h := range hits {
		if h != 1 {
			t.Fatalf("iteration %d ran %d times; want once", i, h)
		}
	}
}

// TestBudgetCutsRounds checks that a spent budget stops the rounds after
// the first, and that the result and the output say so.
func TestBudgetCutsRounds(t *testing.T) {
	withoutCompilers(t)
	o := tinyOptions()
	o.Rounds, o.Budget = 3, time.Nanosecond
	var out bytes.Buffer
	res, err := Run(context.Background(), &out, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 1 || res.RoundsPlanned != 3 {
		t.Errorf("rounds %d of %d; want 1 of 3", res.Rounds, res.RoundsPlanned)
	}
	if row := rowOf(res, "parallel", "RunN "+modeCaller); row == nil || len(row.RoundsNS) != 1 {
		t.Errorf("parallel caller-runs row %+v; want one round", row)
	}
	if !strings.Contains(out.String(), "only 1 of 3 rounds") {
		t.Errorf("output does not say the rounds were cut:\n%s", out.String())
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{Threads: -1}, {Rounds: -2}, {Threads: tasks.MaxCopies + 1}, {DelayNS: -5}, {Budget: -time.Second},
		{Mixed: MixedOptions{Batch: -1}}, {Mixed: MixedOptions{Batches: -3}}, {Mixed: MixedOptions{ForkJoins: -1}}, {Mixed: MixedOptions{WorkNS: []float64{1000, 0}}}} {
		if _, err := Run(context.Background(), &bytes.Buffer{}, o); err == nil || !strings.HasPrefix(err.Error(), "openmp: ") {
			t.Errorf("Run(%+v): got %v; want an error naming the package", o, err)
		}
	}
}

func TestFinishRatios(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &Result{
		Constructs: []Construct{{Name: "parallel", Rows: []Row{
			{Runtime: "libgomp", MedianNS: f(400)},
			{Runtime: "libomp", MedianNS: f(200)},
			{Runtime: workgang, Mode: "a", MedianNS: f(100)},
			{Runtime: workgang, Mode: "b", Note: "not expressible"},
		}}},
		Grain: Grain{GrainsNS: []float64{1000}, Rows: []GrainRow{
			{Runtime: "libgomp", Speedup: []float64{1.5}},
			{Runtime: "libomp", Speedup: []float64{1.2}},
			{Runtime: workgang, Speedup: []float64{0.75}},
		}},
	}
	r.finish()
	rows := r.Constructs[0].Rows
	for i, want := range []float64{2, 1, 0.5} {
		if rows[i].Ratio == nil || *rows[i].Ratio != want {
			t.Errorf("row %d: ratio %v; want %v", i, rows[i].Ratio, want)
		}
	}
	if rows[3].Ratio != nil {
		t.Errorf("not expressible row: ratio %v; want none", *rows[3].Ratio)
	}
	if got := r.Grain.Rows[2].Ratio[0]; got == nil || *got != 2 {
		t.Errorf("grain ratio: got %v; want 2 (twice the best OpenMP time)", got)
	}
}

func TestOpenMPEnv(t *testing.T) {
	got := openmpEnv([]string{"PATH=/bin", "OMP_WAIT_POLICY=passive", "GOMP_SPINCOUNT=0", "HOME=/", "KMP_BLOCKTIME=0", "XOMP_=1"})
	want := []string{"OMP_WAIT_POLICY=passive", "GOMP_SPINCOUNT=0", "KMP_BLOCKTIME=0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("openmpEnv: got %q; want %q", got, want)
	}
}

func TestMid3(t *testing.T) {
	for _, c := range [][4]time.Duration{{1, 2, 3, 2}, {3, 2, 1, 2}, {2, 3, 1, 2}, {1, 3, 2, 2}, {5, 5, 1, 5}, {4, 4, 4, 4}} {
		if got := mid3(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("mid3(%v, %v, %v) = %v; want %v", c[0], c[1], c[2], got, c[3])
		}
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		in           []float64
		med, lo, hip float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{5, 1, 3}, 3, 1, 5},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
	} {
		med, lo, hi := summary(c.in)
		if med != c.med || lo != c.lo || hi != c.hip {
			t.Errorf("summary(%v) = %v, %v, %v; want %v, %v, %v", c.in, med, lo, hi, c.med, c.lo, c.hip)
		}
	}
}

// TestPrintWithholdsAndMarks checks the printed comparisons: a verdict and
// ratios on a quiet machine, none of either on a loaded one (the reason
// instead), and a negative overhead printed as noise, never as a figure or
// a ratio.
func TestPrintWithholdsAndMarks(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	newR := func() *Result {
		r := &Result{Threads: 2, Rounds: 1, RoundsPlanned: 1,
			Constructs: []Construct{
				{Name: "parallel", Title: "PARALLEL", Rows: []Row{
					{Runtime: "libgomp", MedianNS: f(400), MinNS: f(400), MaxNS: f(400)},
					{Runtime: workgang, Mode: "RunN " + modeCaller, MedianNS: f(100), MinNS: f(100), MaxNS: f(100)},
				}},
				{Name: "barrier", Title: "BARRIER", Rows: []Row{
					{Runtime: "libgomp", MedianNS: f(-30), MinNS: f(-30), MaxNS: f(-30)},
					{Runtime: workgang, Mode: modeTeam, MedianNS: f(200), MinNS: f(200), MaxNS: f(200)},
				}},
			},
			Grain: Grain{GrainsNS: []float64{1000}, Rows: []GrainRow{{Runtime: "libgomp", Speedup: []float64{1.5}}}},
		}
		r.finish()
		return r
	}
	var quiet, loaded bytes.Buffer
	newR().print(&quiet)
	r := newR()
	r.withheld = "other programs used 2.0 of the 2 CPUs"
	r.print(&loaded)
	for _, want := range []string{"0.25x", "verdict:", "below the best OpenMP runtime's in 1 of 1", "<0 noise", "- (an OpenMP overhead <0)", "lower is better"} {
		if !strings.Contains(quiet.String(), want) {
			t.Errorf("quiet: output lacks %q:\n%s", want, quiet.String())
		}
	}
	for _, want := range []string{"withheld", "verdict withheld: other programs used 2.0", "<0 noise"} {
		if !strings.Contains(loaded.String(), want) {
			t.Errorf("loaded: output lacks %q:\n%s", want, loaded.String())
		}
	}
	for _, bad := range []string{"0.25x", "verdict:"} {
		if strings.Contains(loaded.String(), bad) {
			t.Errorf("loaded: output has %q:\n%s", bad, loaded.String())
		}
	}
}
