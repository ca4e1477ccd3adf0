// Package contended is the perf command's contended section (opt-in:
// -scenario contended): speedups over serial where the program does not own
// the machine. Each condition (idle, busy processes beside it, confined to
// one CPU, a CPU quota) runs in a child process of its own, the perf binary
// started again with a hidden argument (Role) that holds one long-lived set
// as a user's program does; the section starts and always stops the busy
// processes, and judges every workgang call in every loaded condition.
package contended

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/work"
	"github.com/workgang/workgang/tasks/team"
)

// The section measures what an embedder sees on a machine it does not own:
// each condition (idle, busy processes beside it, confined to fewer CPUs
// than GOMAXPROCS) in a child process of its own, the perf binary run again
// with contendedChildArg.
// The child holds one long-lived set, as a user's program does, and times
// serial, the peers and workgang's calls in interleaved rounds at three
// grains of a CPU-bound slice transform split over GOMAXPROCS copies. The
// CPU burners are processes too (contendedBurnerArg), started and always
// stopped by the section. Process control, CPU affinity and cgroups are in
// contended_linux.go.

// Arguments that make the perf binary a contended child or a burner instead
// of the perf command (see Role). They are not flags: main checks them
// before parsing the command line.
const (
	contendedChildArg  = "-contended-child"
	contendedBurnerArg = "-contended-burner"
)

// contendedGrainsNS are the grains: serial work per call, about 20 us, 200 us
// and 2 ms.
var contendedGrainsNS = []float64{20e3, 200e3, 2e6}

// The section's sizes follow -iters and -runs: contendedRoundsPerIter x
// -iters rounds (15 by default, 9 with -quick), and in each round a batch of
// about -runs microseconds of serial work per method and grain (10 ms by
// default, 1 ms with -quick). Many short rounds rather than a few long ones:
// on a shared machine the load drifts, and a method's batch and serial's in
// the same round see about the same load.
const (
	contendedRoundsPerIter = 3
	contendedBudgetScale   = time.Microsecond
)

// Verdict bars (speedup over serial, higher is better).
const (
	contendedFloor      = 0.95  // every workgang call, every grain, every loaded condition
	contendedOneBusyBar = 1.2   // ForRange at ~200 us with one busy process
	contendedOneBusyAt  = 200e3 // the grain of that check
)

// The rows of workgang's other loops (the other names are in package
// runners).
const (
	nameForChunks  = "workgang ForChunks"
	nameDo         = "workgang Do"
	nameRunContext = "workgang RunContext"
)

// contendedMethods are the rows in table order: serial (the speedups'
// denominator), the peers, then workgang's calls. contendedCalls are the
// workgang calls the verdict checks.
var (
	contendedMethods = []string{runners.NameSerial, runners.NameWaitGroup, runners.NameErrgroup, runners.NameForRange, nameForChunks, nameDo, nameRunContext, runners.NameWorkgang, runners.NameTeam}
	contendedCalls   = contendedMethods[3:]
)

// contendedCond is one condition the section measures.
type contendedCond struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Procs is the child's GOMAXPROCS: the copies per call and the set's
	// size.
	Procs   int  `json:"gomaxprocs"`
	Burners int  `json:"burners"`  // CPU-burning processes beside the child
	OneCPU  bool `json:"one_cpu"`  // the child confined to one CPU (affinity)
	Quota   bool `json:"quota"`    // the child in a cgroup with a CPU quota below Procs
	Loaded  bool `json:"loaded"`   // judged by the verdict (all but idle)
	OneBusy bool `json:"one_busy"` // the ForRange >= 1.2x check applies
}

// contendedConds returns the conditions for full parallelism procs (-max).
func contendedConds(procs int) []contendedCond {
	pinned := max(2, procs)
	return []contendedCond{
		{Key: "idle", Label: "no load added by the section", Procs: procs},
		{Key: "one-busy", Label: "1 busy process", Procs: procs, Burners: 1, Loaded: true, OneBusy: true},
		{Key: "all-busy", Label: fmt.Sprintf("%d busy processes (one per GOMAXPROCS)", procs), Procs: procs, Burners: procs, Loaded: true},
		{Key: "one-cpu", Label: fmt.Sprintf("confined to 1 CPU (affinity), GOMAXPROCS %d", pinned), Procs: pinned, OneCPU: true, Loaded: true},
		{Key: "quota", Label: fmt.Sprintf("cgroup CPU quota of %s CPU, GOMAXPROCS %d", fmtCPUs(quotaCPUs(procs)), procs), Procs: procs, Quota: true, Loaded: true},
	}
}

// quotaCPUs is the quota condition's CPU limit for GOMAXPROCS procs: half of
// it (1 CPU on a 2-CPU machine), below GOMAXPROCS also at 1.
func quotaCPUs(procs int) float64 { return float64(procs) / 2 }

// fmtCPUs formats a CPU count without trailing zeros.
func fmtCPUs(c float64) string { return fmt.Sprintf("%g", c) }

// contendedSpec is what the parent tells a child to measure, passed as JSON
// after contendedChildArg.
type contendedSpec struct {
	Procs     int       `json:"procs"`
	NSPerElem float64   `json:"ns_per_elem"` // calibrated by the parent, so every child does the same work
	GrainsNS  []float64 `json:"grains_ns"`
	BudgetNS  float64   `json:"budget_ns"` // serial work per timed batch
	Rounds    int       `json:"rounds"`
	Pin       bool      `json:"pin"`
	// CgroupProcs is the cgroup.procs file the child writes its pid to
	// before measuring; "" for none.
	CgroupProcs string `json:"cgroup_procs,omitempty"`
	// Deadline (Unix ns) after which the child gives up between batches.
	Deadline int64 `json:"deadline"`
}

// contendedMethod is one row of a condition's table.
type contendedMethod struct {
	Impl string `json:"impl"`
	// Per grain, over the rounds (see summarizeRounds): the median, 25th
	// and 75th percentile of the speedup over serial (serial's time in the
	// same round / this method's; higher is better). Serial's own row holds
	// its time per call in ns instead.
	Median []float64 `json:"median"`
	P25    []float64 `json:"p25"`
	P75    []float64 `json:"p75"`
	// CPUPerCallNS is, per grain, the median process CPU time (user+system)
	// per call: how much CPU the call took, spinning included.
	CPUPerCallNS []float64 `json:"cpu_per_call_ns"`
}

// contendedChild is a child's result.
type contendedChild struct {
	Procs       int               `json:"gomaxprocs"`
	CPUsAllowed int               `json:"cpus_allowed"`  // the child's affinity mask
	Cgroup      string            `json:"cgroup"`        // /proc/self/cgroup after joining
	Elements    []int             `json:"elements"`      // per grain: slice length
	Calls       []int             `json:"calls"`         // per grain: calls per timed batch
	Methods     []contendedMethod `json:"methods"`       // in contendedMethods order
	Waits       runners.WaitStats `json:"worker_waits"`  // how workers saw runs, every workgang call
	LoadStart   string            `json:"loadavg_start"` // /proc/loadavg when the child started
	LoadAvg     string            `json:"loadavg_end"`
}

// contendedCondResult is one condition: skipped (with the reason) or the
// child's result.
type contendedCondResult struct {
	contendedCond
	Setup   string          `json:"setup,omitempty"` // the burners' pids, the cgroup
	Skipped string          `json:"skipped,omitempty"`
	Child   *contendedChild `json:"child"`
}

// contendedVerdict is one workgang call in one loaded condition.
type contendedVerdict struct {
	Cond string `json:"condition"`
	Impl string `json:"impl"`
	Pass bool   `json:"pass"`
	// At the grain where the call falls furthest below its bar (or comes
	// closest to it, when it passes): the grain, the call's speedup and the
	// bar, max(go+WaitGroup's speedup, 0.95).
	GrainNS float64 `json:"grain_ns"`
	Speedup float64 `json:"speedup"`
	Bar     float64 `json:"bar"`
	BarIsWG bool    `json:"bar_is_waitgroup"`
}

// contendedCheck is the one-busy-process check of ForRange at ~200 us.
type contendedCheck struct {
	Cond    string  `json:"condition"`
	Speedup float64 `json:"speedup"`
	Want    float64 `json:"want"`
	Pass    bool    `json:"pass"`
}

// contendedResult is the section's result.
type contendedResult struct {
	NSPerElem  float64               `json:"ns_per_elem"`
	GrainsNS   []float64             `json:"grains_ns"`
	Rounds     int                   `json:"rounds"`
	BudgetNS   float64               `json:"budget_ns"`
	Conditions []contendedCondResult `json:"conditions"`
	Verdicts   []contendedVerdict    `json:"verdicts"`
	Checks     []contendedCheck      `json:"checks"`
}

// contendedSizes returns the rounds and the batch budget for cfg.
func contendedSizes(c harness.Config) (rounds int, budgetNS float64) {
	return contendedRoundsPerIter * c.Iters, float64(c.Runs) * float64(contendedBudgetScale)
}

// runContended measures every condition, each in a child process, prints a
// table per condition and the verdicts.
func runContended(h *harness.Harness) (any, error) {
	ctx, stop := contendedSignals(context.Background())
	defer stop()
	rounds, budget := contendedSizes(h.Cfg)
	res := &contendedResult{NSPerElem: calibrateSlice(), GrainsNS: contendedGrainsNS, Rounds: rounds, BudgetNS: budget}
	fmt.Fprintf(h.Out, "work: a slice transform (%.2f ns per element), split over GOMAXPROCS copies; each condition in a process of its own with one long-lived set\n", res.NSPerElem)
	fmt.Fprintf(h.Out, "speedup = serial time / method time in the same round (higher is better): median of %d rounds (25th-75th percentile); ~%s of serial work per method, grain and round\n",
		rounds, measure.FmtNS(budget))
	fmt.Fprintf(h.Out, "rows: workgang = RunN of a plain task (every copy on a worker); ForRange and RunContext let the caller run copies; RunTeam runs each copy on a worker\n")
	conds := contendedConds(h.Cfg.Max)
	for i, c := range conds {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("interrupted: %w", err)
		}
		h.Status("contended: %s (%d/%d)", c.Key, i+1, len(conds))
		spec := contendedSpec{Procs: c.Procs, NSPerElem: res.NSPerElem, GrainsNS: contendedGrainsNS, BudgetNS: budget, Rounds: rounds, Pin: h.Cfg.Pin}
		run, err := runCondition(ctx, c, spec, contendedTimeout(spec))
		h.ClearStatus()
		if err != nil {
			return nil, fmt.Errorf("condition %s: %w", c.Key, err)
		}
		cr := contendedCondResult{contendedCond: c, Setup: run.Setup, Skipped: run.Skipped, Child: run.Child}
		printCondition(h.Out, i+1, len(conds), cr, contendedGrainsNS)
		res.Conditions = append(res.Conditions, cr)
	}
	res.Verdicts, res.Checks = contendedVerdicts(res.Conditions, contendedGrainsNS)
	printVerdicts(h.Out, res.Verdicts, res.Checks, res.Conditions)
	return res, nil
}

// contendedSignals returns a context cancelled on an interrupt or SIGTERM,
// so that the section stops its processes before the perf command exits;
// stop restores the default handling.
func contendedSignals(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// contendedTimeout bounds one child: ten times its work done serially on an
// idle machine, plus a minute.
func contendedTimeout(s contendedSpec) time.Duration {
	batches := float64(s.Rounds+1) * float64(len(s.GrainsNS)*len(contendedMethods))
	return time.Duration(10*batches*s.BudgetNS) + time.Minute
}

// Section is the contended section.
var Section = harness.Section{
	Name:  "contended",
	Title: "contended: speedup over serial on a shared machine (busy processes, one CPU, a CPU quota), each condition in a process of its own",
	Run:   runContended,
	OptIn: true,
}

// Role runs the perf binary as a contended child or burner when
// args (the command line after the program name) start with one of their
// arguments, and reports the exit code; ok is false for the perf command.
func Role(args []string) (code int, ok bool) {
	if len(args) != 2 {
		return 0, false
	}
	switch args[0] {
	case contendedChildArg:
		return contendedChildMain(args[1], os.Stdout, os.Stderr), true
	case contendedBurnerArg:
		return contendedBurnerMain(args[1]), true
	}
	return 0, false
}

// contendedBurnerMain burns one CPU until the deadline (Unix ns) passes or
// its parent is gone, whichever comes first: a burner outlives neither the
// section nor a perf command killed without cleaning up.
func contendedBurnerMain(deadline string) int {
	var d int64
	if _, err := fmt.Sscan(deadline, &d); err != nil {
		return 2
	}
	ppid := os.Getppid()
	var sink uint64
	for time.Now().UnixNano() < d && os.Getppid() == ppid {
		sink += work.Burn(1 << 16) // tens of microseconds between checks
	}
	runtime.KeepAlive(sink)
	return 0
}

// contendedChildMain measures one condition as the spec in specJSON says and
// writes the result as JSON to stdout.
func contendedChildMain(specJSON string, stdout, stderr io.Writer) int {
	var s contendedSpec
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		fmt.Fprintln(stderr, "perf contended child:", err)
		return 2
	}
	if s.CgroupProcs != "" {
		// Writing our pid moves the whole process, every thread, into the
		// cgroup before anything is measured.
		if err := os.WriteFile(s.CgroupProcs, []byte(fmt.Sprint(os.Getpid())), 0); err != nil {
			fmt.Fprintln(stderr, "perf contended child: joining the cgroup:", err)
			return 1
		}
	}
	if got := runtime.GOMAXPROCS(0); got != s.Procs {
		fmt.Fprintf(stderr, "perf contended child: GOMAXPROCS %d, want %d\n", got, s.Procs)
		return 1
	}
	load := harness.LoadAvg()
	ppid := os.Getppid()
	alive := func() error {
		if os.Getppid() != ppid {
			return errors.New("the perf command is gone")
		}
		if time.Now().UnixNano() > s.Deadline {
			return errors.New("deadline passed")
		}
		return nil
	}
	res, err := measureContended(s, alive)
	if err != nil {
		fmt.Fprintln(stderr, "perf contended child:", err)
		return 1
	}
	res.CPUsAllowed, res.Cgroup, res.LoadStart, res.LoadAvg = cpusAllowed(), ownCgroup(), load, harness.LoadAvg()
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintln(stderr, "perf contended child:", err)
		return 1
	}
	return 0
}

// ownCgroup returns /proc/self/cgroup on one line, or "" where there is none.
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// mixRounds is the rounds of mix per element: enough that a grain's slice
// stays small (2 ms is a few hundred thousand elements), so the work is
// CPU-bound rather than memory-bound.
const mixRounds = 8

// mix is a CPU-bound per-element transform (multiply-xorshift rounds).
func mix(x uint64) uint64 {
	for range mixRounds {
		x ^= x >> 31
		x *= 0x9E3779B97F4A7C15
		x ^= x >> 29
	}
	return x
}

// sliceWork is one grain's work: out[i] = mix(in[i]) over the slice, split
// into copies contiguous blocks.
type sliceWork struct {
	in, out []uint64
	copies  int
}

// newSliceWork returns the work of n elements split over copies copies.
func newSliceWork(n, copies int) *sliceWork {
	s := &sliceWork{in: make([]uint64, n), out: make([]uint64, n), copies: copies}
	for i := range s.in {
		s.in[i] = uint64(i)*0x2545F4914F6CDD1D + 1
	}
	return s
}

// span transforms elements [lo, hi).
func (s *sliceWork) span(lo, hi int) {
	for i := lo; i < hi; i++ {
		s.out[i] = mix(s.in[i])
	}
}

// copyWork is copy i's block.
func (s *sliceWork) copyWork(i int) { s.span(work.Block(i, s.copies, len(s.in))) }

// checksum returns a digest of out, to check that a method did every
// element.
func (s *sliceWork) checksum() uint64 {
	var h uint64
	for i, x := range s.out {
		h += x * uint64(2*i+1)
	}
	return h
}

// calibrateSlice returns the cost of one element of sliceWork in ns: the
// best of a few passes over 20k elements (the least disturbed).
func calibrateSlice() float64 {
	s := newSliceWork(20000, 1)
	best := time.Duration(math.MaxInt64)
	for range 9 {
		start := time.Now()
		s.span(0, len(s.in))
		best = min(best, time.Since(start))
	}
	return float64(best) / float64(len(s.in))
}

// contendedRunners returns, in contendedMethods order, one call of each
// method over s, on the long-lived set ls and the peers (started for procs
// copies); stop stops the peers. Closures are made here, once per grain, so
// the calls allocate only what the mechanisms do.
func contendedRunners(ls *runners.LongSet, s *sliceWork) (calls []func(), stop func()) {
	c := s.copies
	wg, stopWG := runners.Peers[0].Start(c)
	eg, stopEG := runners.Peers[1].Start(c)
	ctx := context.Background()
	plain := runners.Task(s.copyWork, false)
	rangeBody := func(_, lo, hi int) { s.span(lo, hi) }
	ctxBody := func(_ context.Context, i int) error { s.copyWork(i); return nil }
	teamBody := func(m *team.Member) { s.copyWork(m.ID()) }
	calls = []func(){
		func() { runners.Serial(c, s.copyWork) },
		func() { wg(c, s.copyWork) },
		func() { eg(c, s.copyWork) },
		// The loops as a user calls them: their copies are ActiveWorkers (the
		// set's c), cut to the processors the process may use.
		func() { ls.W.ForRange(len(s.in), rangeBody) },
		func() {
			ls.W.ForChunks(len(s.in), func(chunks iter.Seq2[int, int]) {
				for lo, hi := range chunks {
					s.span(lo, hi)
				}
			})
		},
		func() { ls.W.Do(c, s.copyWork) },
		func() { _ = ls.W.RunContext(ctx, c, ctxBody) }, // the body returns no errors
		func() { ls.W.RunN(plain, c) },
		func() { ls.W.RunTeam("contended", c, teamBody) },
	}
	return calls, func() { stopWG(); stopEG() }
}

// measureContended is the child's measurement: one long-lived set of
// s.Procs workers; per grain, a warm-up that also checks every method's
// result against serial's; then s.Rounds rounds in which every method runs
// one timed batch per grain, in an order rotated per round. alive is called
// between batches; its error stops the measurement.
func measureContended(s contendedSpec, alive func() error) (*contendedChild, error) {
	runners.Pin(s.Pin)
	ls := runners.NewLongSet(s.Procs)
	defer ls.Close()
	res := &contendedChild{Procs: s.Procs}
	works := make([]*sliceWork, len(s.GrainsNS))
	calls := make([][]func(), len(s.GrainsNS))
	for g, w := range s.GrainsNS {
		n := max(s.Procs, int(math.Round(w/s.NSPerElem)))
		works[g] = newSliceWork(n, s.Procs)
		var stop func()
		calls[g], stop = contendedRunners(ls, works[g])
		defer stop()
		res.Elements = append(res.Elements, n)
		res.Calls = append(res.Calls, max(3, int(math.Round(s.BudgetNS/w))))
	}
	for g := range s.GrainsNS {
		if err := warmContended(works[g], calls[g], max(1, res.Calls[g]/4)); err != nil {
			return nil, err
		}
	}
	nm := len(contendedMethods)
	wall := make([][][]float64, nm) // [method][grain][round] ns per call
	cpu := make([][][]float64, nm)
	for m := range nm {
		wall[m], cpu[m] = make([][]float64, len(s.GrainsNS)), make([][]float64, len(s.GrainsNS))
	}
	waits := runners.SetWaits(ls.W)
	before := waits()
	for r := range s.Rounds {
		for g := range s.GrainsNS {
			for k := range nm {
				if err := alive(); err != nil {
					return nil, err
				}
				m := (k + r) % nm
				wns, cns := timeCalls(calls[g][m], res.Calls[g])
				wall[m][g] = append(wall[m][g], wns)
				cpu[m][g] = append(cpu[m][g], cns)
			}
		}
	}
	res.Waits = waits().Sub(before)
	for m, name := range contendedMethods {
		row := contendedMethod{Impl: name}
		for g := range s.GrainsNS {
			mid, lo, hi := summarizeRounds(wall[0][g], wall[m][g], m == 0)
			row.Median, row.P25, row.P75 = append(row.Median, mid), append(row.P25, lo), append(row.P75, hi)
			row.CPUPerCallNS = append(row.CPUPerCallNS, measure.Median(cpu[m][g]))
		}
		res.Methods = append(res.Methods, row)
	}
	return res, nil
}

// warmContended runs every method calls times untimed, after checking that
// one call of each computes serial's result.
func warmContended(s *sliceWork, calls []func(), n int) error {
	var want uint64
	for m, call := range calls {
		clear(s.out)
		call()
		sum := s.checksum()
		if m == 0 {
			want = sum
		} else if sum != want {
			return fmt.Errorf("%s over %d elements: checksum %#x, serial's %#x", contendedMethods[m], len(s.in), sum, want)
		}
		for range n {
			call()
		}
	}
	return nil
}

// timeCalls runs call n times after a collection and returns the wall and
// process CPU time per call in ns.
func timeCalls(call func(), n int) (wallNS, cpuNS float64) {
	runtime.GC()
	c0 := processCPU()
	start := time.Now()
	for range n {
		call()
	}
	elapsed := time.Since(start)
	c1 := processCPU()
	return float64(elapsed) / float64(n), float64(c1-c0) / float64(n)
}

// summarizeRounds returns a method's figure at one grain from the per-round
// times per call of serial and of the method: the median, 25th and 75th
// percentile over the rounds of serial[r] / times[r], the speedup in round
// r (a round's batches run close together, under about the same load), or
// of serial's own times (isSerial).
func summarizeRounds(serial, times []float64, isSerial bool) (mid, p25, p75 float64) {
	xs := slices.Clone(times)
	if !isSerial {
		for r := range xs {
			xs[r] = measure.Ratio(serial[r], times[r])
		}
	}
	slices.Sort(xs)
	return measure.Median(xs), quantile(xs, 25), quantile(xs, 75)
}

// quantile returns the p-th percentile (nearest rank) of sorted, which must
// not be empty.
func quantile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// method returns the row called name, or nil.
func (c *contendedChild) method(name string) *contendedMethod {
	for i := range c.Methods {
		if c.Methods[i].Impl == name {
			return &c.Methods[i]
		}
	}
	return nil
}

// contendedVerdicts judges every workgang call in every loaded condition
// that was measured: it passes when at every grain its median speedup is at
// least go+WaitGroup's and at least contendedFloor. The one-busy conditions
// also check ForRange at contendedOneBusyAt against contendedOneBusyBar.
func contendedVerdicts(conds []contendedCondResult, grains []float64) ([]contendedVerdict, []contendedCheck) {
	var vs []contendedVerdict
	var cs []contendedCheck
	for _, c := range conds {
		if !c.Loaded || c.Child == nil {
			continue
		}
		wg := c.Child.method(runners.NameWaitGroup)
		for _, name := range contendedCalls {
			m := c.Child.method(name)
			if m == nil || wg == nil {
				continue
			}
			v := contendedVerdict{Cond: c.Key, Impl: name, Pass: true}
			worst := math.Inf(1)
			for g := range grains {
				bar := max(wg.Median[g], contendedFloor)
				if r := m.Median[g] / bar; r < worst {
					worst = r
					v.GrainNS, v.Speedup, v.Bar, v.BarIsWG = grains[g], m.Median[g], bar, wg.Median[g] >= contendedFloor
				}
			}
			v.Pass = worst >= 1
			vs = append(vs, v)
		}
		if g := slices.Index(grains, contendedOneBusyAt); c.OneBusy && g >= 0 {
			if m := c.Child.method(runners.NameForRange); m != nil {
				s := m.Median[g]
				cs = append(cs, contendedCheck{Cond: c.Key, Speedup: s, Want: contendedOneBusyBar, Pass: s >= contendedOneBusyBar})
			}
		}
	}
	return vs, cs
}

// printCondition prints one condition's table: serial's time per call, then
// every method's speedup over serial.
func printCondition(w io.Writer, i, n int, c contendedCondResult, grains []float64) {
	fmt.Fprintf(w, "\n[%d/%d] %s: %s\n", i, n, c.Key, c.Label)
	if c.Skipped != "" {
		fmt.Fprintf(w, "skipped: %s\n", c.Skipped)
		return
	}
	ch := c.Child
	if c.Setup != "" {
		fmt.Fprintf(w, "setup: %s\n", c.Setup)
	}
	fmt.Fprintf(w, "child: GOMAXPROCS %d, %d CPU(s) allowed, load average %s at its start, %s at its end\n", ch.Procs, ch.CPUsAllowed, ch.LoadStart, ch.LoadAvg)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "speedup over serial (higher is better)\t")
	for _, g := range grains {
		fmt.Fprintf(tw, "~%s\t", measure.FmtNS(g))
	}
	fmt.Fprintln(tw, "CPU time / serial's (lower is better)\t")
	serialCPU := ch.Methods[0].CPUPerCallNS
	for _, m := range ch.Methods {
		if m.Impl == runners.NameSerial {
			fmt.Fprint(tw, "serial: us per call\t")
			for g := range grains {
				fmt.Fprintf(tw, "%.1f (%.1f-%.1f)\t", m.Median[g]/1e3, m.P25[g]/1e3, m.P75[g]/1e3)
			}
			fmt.Fprintln(tw, "\t")
			continue
		}
		fmt.Fprintf(tw, "%s\t", m.Impl)
		cpu := make([]string, len(grains))
		for g := range grains {
			fmt.Fprintf(tw, "%.2f (%.2f-%.2f)\t", m.Median[g], m.P25[g], m.P75[g])
			cpu[g] = fmt.Sprintf("%.2f", measure.Ratio(m.CPUPerCallNS[g], serialCPU[g]))
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cpu, "/"))
	}
	tw.Flush()
	// A worker sights each run it looks at once: already posted, posted
	// while it spun, or after it parked and was woken.
	if wt := ch.Waits; wt.Ready+wt.Spun+wt.Parked > 0 {
		seen := float64(wt.Ready + wt.Spun + wt.Parked)
		pct := func(x uint64) float64 { return 100 * float64(x) / seen }
		fmt.Fprintf(w, "runs the workers saw (every workgang call): %.0f%% already posted, %.0f%% while spinning, %.0f%% after parking and a wake-up\n",
			pct(wt.Ready), pct(wt.Spun), pct(wt.Parked))
	}
}

// printVerdicts prints the verdict table of the loaded conditions and the
// one-busy checks.
func printVerdicts(w io.Writer, vs []contendedVerdict, cs []contendedCheck, conds []contendedCondResult) {
	fmt.Fprintf(w, "\nverdict per loaded condition (higher is better): a call PASSes when at every grain its speedup over serial is >= go+WaitGroup's and >= %.2f;\n", contendedFloor)
	fmt.Fprintln(w, "each cell: the grain where the call is furthest below that bar (closest to it on a PASS), its speedup and the bar (WG: go+WaitGroup's)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "condition\t")
	for _, name := range contendedCalls {
		fmt.Fprintf(tw, "%s\t", name)
	}
	fmt.Fprintln(tw)
	for _, c := range conds {
		if !c.Loaded {
			continue
		}
		fmt.Fprintf(tw, "%s\t", c.Key)
		if c.Skipped != "" {
			fmt.Fprint(tw, "skipped\t")
		}
		for _, v := range vs {
			if v.Cond == c.Key {
				fmt.Fprintf(tw, "%s\t", fmtVerdict(v))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, c := range cs {
		fmt.Fprintf(w, "%s: %s at ~%s %.2fx serial (higher is better), want >= %.1f: %s\n",
			c.Cond, runners.NameForRange, measure.FmtNS(contendedOneBusyAt), c.Speedup, c.Want, passMiss(c.Pass))
	}
}

// fmtVerdict formats one verdict cell: "PASS 2ms 1.60>=0.95" or
// "MISS 20us 0.63<WG 0.93".
func fmtVerdict(v contendedVerdict) string {
	bar := fmt.Sprintf("%.2f", v.Bar)
	if v.BarIsWG {
		bar = "WG " + bar
	}
	op := ">="
	if !v.Pass {
		op = "<"
	}
	return fmt.Sprintf("%s %s %.2f%s%s", passMiss(v.Pass), measure.FmtNS(v.GrainNS), v.Speedup, op, bar)
}

// passMiss names a verdict.
func passMiss(pass bool) string {
	if pass {
		return "PASS"
	}
	return "MISS"
}
