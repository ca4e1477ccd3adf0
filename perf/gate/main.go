// Command gate measures each scheduling hint of workgang's wait policy
// (internal/spin; the one left is load) on and off, on the scenarios each
// hint was designed for and on held-out ones it was not tuned on (other
// libraries' fork-joins between batches, the EPCC-style grain sweep, a
// ported library's own operation, idle gaps), with the installed Go and with
// a second Go release, and says which hints earn their place.
//
//	go run ./perf/gate                      # installed Go and go1.27.3, 5 runs each
//	go run ./perf/gate -go go1.27.3 -runs 5 # the same, spelled out
//	go run ./perf/gate -go '' -runs 1       # installed Go only, one run
//	go run ./perf/gate -only forkjoin-gap,mixed # a few scenarios (a quick look)
//
// The driver builds this program once per Go release (GOTOOLCHAIN=release go
// build; the module proxy serves the toolchain), then runs the binaries in
// turn, A B A B ..., each a process of its own. Each process measures every
// scenario under every hint setting, interleaved in rounds, and prints the
// medians as JSON; the driver prints, per hint, the time with the hint off
// over the time with every hint on (higher than 1: the hint pays), the median
// of the runs of each release, and the verdict of the rule the maintainers
// keep a hint by: it pays at least 5% on a scenario it targets on both
// releases, and on every held-out scenario, on both, it costs no more than
// the run-to-run spread of the all-on time there (printed beside each cost):
// a cost the gate cannot tell from noise is no cost, one it can is.
//
// It is a maintainers' tool: gang/README.md keeps its last table.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc"
	"golang.org/x/sync/errgroup"

	"github.com/workgang/workgang/examples/ports/filter"
	"github.com/workgang/workgang/internal/spin"
	"github.com/workgang/workgang/perf/internal/alternate"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

func main() {
	measure := flag.Bool("measure", false, "measure in this process and print JSON (what the driver runs)")
	burn := flag.Duration("burn", 0, "burn one CPU for this long, then exit (the contended scenario's other process)")
	goRel := flag.String("go", "go1.27.3", "the second Go release (GOTOOLCHAIN value); empty: only the installed Go")
	runs := flag.Int("runs", 5, "processes per release, interleaved (with 3, the contended scenarios' noise decides verdicts: gang/README.md)")
	rounds := flag.Int("rounds", 3, "rounds per process (every scenario under every setting, in a shuffled order)")
	flag.Func("only", "measure only these scenarios (comma list; the verdict then judges only them)", func(v string) error {
		if v != "" {
			only = strings.Split(v, ",")
		}
		return nil
	})
	flag.Parse()
	switch {
	case *burn > 0:
		for end := time.Now().Add(*burn); time.Now().Before(end); {
			spinWork(1 << 20)
		}
	case *measure:
		res := measureAll(*rounds)
		if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		if err := drive(*goRel, *runs, *rounds); err != nil {
			fmt.Fprintln(os.Stderr, "gate:", err)
			os.Exit(1)
		}
	}
}

// only, if set, names the scenarios to measure (-only); else every one.
var only []string

// A setting is a set of hints in force while a scenario is measured.
type setting struct {
	name  string
	hints spin.Hint
}

func settings() []setting {
	all := spin.ParseHints("all")
	s := []setting{{"all", all}}
	for _, h := range hintNames {
		s = append(s, setting{"-" + h, spin.ParseHints("-" + h)})
	}
	return append(s, setting{"plain", spin.ParseHints("plain")})
}

var hintNames = []string{"load"}

// targets names the scenarios each hint was designed for; every other
// scenario is held out for it.
var targets = map[string][]string{
	"load": {"contended-forrange", "contended-plain", "contended2-forrange"},
}

// result is one process's medians (scenario -> setting -> ns per operation)
// and every sample of the all-on setting (scenario -> a sample per round),
// which the spread is measured on.
type result struct {
	Go    string                        `json:"go"`
	Procs int                           `json:"procs"`
	NS    map[string]map[string]float64 `json:"ns"`
	All   map[string][]float64          `json:"all_samples"`
}

// scenario is one measured operation on the process's one long-lived set.
type scenario struct {
	name string
	op   func(w *workers.Workers)
	// burners other processes burning a CPU while it is measured.
	burners int
	// between, if set, runs untimed before every op (then timed alone).
	between func()
	// batch is the op time one timed batch is sized to (default 20 ms): a
	// scenario whose between takes far longer than its op uses less.
	batch time.Duration
}

// portImages returns a source image of side x side pixels and a destination.
func portImages(side int) (src, dst *image.RGBA) {
	r := image.Rect(0, 0, side, side)
	src, dst = image.NewRGBA(r), image.NewRGBA(r)
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 7)
	}
	return src, dst
}

// peerBatches returns a function that runs k empty fork-joins of p copies on
// each peer in turn (go+WaitGroup, errgroup, conc, an ants pool, a channel
// pool). The pools start at its first call and live as long as the process,
// as a program's own would.
func peerBatches(p, k int) func() {
	var once sync.Once
	var peers []func()
	start := func() {
		pool, err := ants.NewPool(p)
		if err != nil {
			panic(err)
		}
		jobs := make(chan *sync.WaitGroup)
		for range p {
			go func() {
				for wg := range jobs {
					wg.Done()
				}
			}()
		}
		nop := func() {}
		peers = []func(){
			func() {
				var wg sync.WaitGroup
				wg.Add(p)
				for range p {
					go wg.Done()
				}
				wg.Wait()
			},
			func() {
				var g errgroup.Group
				for range p {
					g.Go(func() error { return nil })
				}
				_ = g.Wait()
			},
			func() {
				var wg conc.WaitGroup
				for range p {
					wg.Go(nop)
				}
				wg.Wait()
			},
			func() {
				var wg sync.WaitGroup
				wg.Add(p)
				for range p {
					_ = pool.Submit(wg.Done)
				}
				wg.Wait()
			},
			func() {
				var wg sync.WaitGroup
				wg.Add(p)
				for range p {
					jobs <- &wg
				}
				wg.Wait()
			},
		}
	}
	return func() {
		once.Do(start)
		for _, peer := range peers {
			for range k {
				peer()
			}
		}
	}
}

func scenarios() []scenario {
	p := runtime.GOMAXPROCS(0)
	empty := tasks.Func("empty", func(int) {})
	emptyCaller := tasks.CallerRuns(empty)
	grain := func(d time.Duration) tasks.Task { return tasks.Func("grain", func(int) { work(d) }) }
	g2, g5, g5x := grain(2*time.Microsecond), grain(5*time.Microsecond), tasks.CallerRuns(grain(5*time.Microsecond))
	loop := func(w *workers.Workers, total time.Duration) {
		chunks := 8 * p
		w.ForRange(chunks, func(_, lo, hi int) { work(total * time.Duration(hi-lo) / time.Duration(chunks)) }, workers.WithChunk(1))
	}
	plainLoop := func(w *workers.Workers, total time.Duration) {
		w.RunN(tasks.Func("plain", func(int) { work(total / time.Duration(p)) }), p)
	}
	// forkJoins runs k go+WaitGroup fork-joins of p goroutines working d
	// each: another library's parallel code in the same process.
	forkJoins := func(k int, d time.Duration) {
		for range k {
			var wg sync.WaitGroup
			for range p {
				wg.Add(1)
				go func() { defer wg.Done(); work(d) }()
			}
			wg.Wait()
		}
	}
	src, dst := portImages(256)
	blur, _ := filter.Ops()[1].Variant(filter.LineForRange)
	return slices.DeleteFunc([]scenario{
		{name: "empty-full", op: func(w *workers.Workers) { w.RunN(empty, p) }},
		{name: "empty-caller-2", op: func(w *workers.Workers) { w.RunN(emptyCaller, 2) }},
		// The EPCC-style grain sweep: a plain run of p copies of W each.
		{name: "grain-1us", op: func(w *workers.Workers) { w.RunN(grain(time.Microsecond), p) }},
		{name: "grain-2us", op: func(w *workers.Workers) { w.RunN(g2, p) }},
		{name: "grain-5us", op: func(w *workers.Workers) { w.RunN(g5, p) }},
		{name: "grain-20us", op: func(w *workers.Workers) { w.RunN(grain(20*time.Microsecond), p) }},
		// Batches of empty plain runs, each after batches of the same
		// fork-join on the peers a program links beside workgang: the
		// process the users' own harnesses measure. Only the batch is timed.
		{name: "peers-interleaved", op: func(w *workers.Workers) {
			for range 1000 {
				w.RunN(empty, p)
			}
		}, between: peerBatches(p, 1000), batch: 10 * time.Millisecond},
		// A ported library's own operation: the blur of a 256x256 image on
		// the set (examples/ports).
		{name: "port-blur-256", op: func(w *workers.Workers) { blur.Run(w, dst, src) }},
		// Runs of one copy on a set of p workers: the others are surplus.
		{name: "surplus", op: func(w *workers.Workers) { w.RunN(g2, 1) }},
		// A collector-like pause: phases of varying n and mode, with a
		// little serial work between them.
		{name: "pause", op: func(w *workers.Workers) {
			for i := range 8 {
				n := 1 + i%p
				if i%2 == 0 {
					w.RunN(g5x, n)
				} else {
					w.RunN(g5, n)
				}
				work(3 * time.Microsecond)
			}
		}},
		// Caller-runs loops between other goroutines' fork-joins and a gap
		// long enough for the workers to park.
		{name: "mixed", op: func(w *workers.Workers) {
			loop(w, 40*time.Microsecond)
			forkJoins(1, 20*time.Microsecond)
			time.Sleep(200 * time.Microsecond)
		}},
		{name: "forrange-20us", op: func(w *workers.Workers) { loop(w, 20*time.Microsecond) }},
		// Batches of caller-runs loops, each after other goroutines'
		// fork-joins long enough (0.4 ms) for the idle workers to park:
		// only the batch is timed.
		{name: "forkjoin-gap", op: func(w *workers.Workers) {
			for range 4 {
				loop(w, 100*time.Microsecond)
			}
		}, between: func() { forkJoins(4, 100*time.Microsecond) }},
		// Short loops (about 15 us, as the openmp section's schedule rows)
		// after other libraries' go+WaitGroup fork-joins long enough (1 ms)
		// for the idle workers to park, far past their spin budget: a
		// program mixing workgang with other fork-join code, as that
		// section's mixed-process mode. A worker woken late arrives after
		// such a loop has ended on its caller.
		{name: "forkjoin-short", op: func(w *workers.Workers) {
			for range 4 {
				loop(w, 15*time.Microsecond)
			}
		}, between: func() { forkJoins(4, 250*time.Microsecond) }},
		// The first phase after an idle gap (a collector's cycle, a request
		// after a quiet spell): the workers parked long ago, the wait
		// policy's view of the machine is stale, and the run's waits end
		// within tens of microseconds. Only the run is timed.
		{name: "idle-gap", op: func(w *workers.Workers) { w.RunN(empty, p) },
			between: func() { time.Sleep(3 * time.Millisecond) }, batch: 2 * time.Millisecond},
		{name: "contended-forrange", burners: 1, op: func(w *workers.Workers) { loop(w, 200*time.Microsecond) }},
		{name: "contended-plain", burners: 1, op: func(w *workers.Workers) { plainLoop(w, 200*time.Microsecond) }},
		// A shared CI runner or a laptop: as many busy processes as CPUs.
		{name: "contended2-forrange", burners: p, op: func(w *workers.Workers) { loop(w, 200*time.Microsecond) }},
	}, func(sc scenario) bool { return only != nil && !slices.Contains(only, sc.name) })
}

// measureAll measures every scenario under every setting, rounds times, the
// settings in a new order each round, and returns the medians.
func measureAll(rounds int) result {
	calibrate()
	w := workers.New("gate", runtime.GOMAXPROCS(0))
	defer w.Close()
	w.RunN(tasks.Func("create", func(int) {}), w.MaxWorkers())
	sets := settings()
	samples := map[string]map[string][]float64{}
	for _, sc := range scenarios() {
		samples[sc.name] = map[string][]float64{}
		stop := startBurners(sc.burners)
		for r := range rounds {
			order := slices.Clone(sets)
			rotate(order, r)
			for _, s := range order {
				old := spin.SetHints(s.hints)
				samples[sc.name][s.name] = append(samples[sc.name][s.name], timeOp(w, sc))
				spin.SetHints(old)
			}
		}
		stop()
	}
	res := result{Go: runtime.Version(), Procs: runtime.GOMAXPROCS(0), NS: map[string]map[string]float64{}, All: map[string][]float64{}}
	for sc, m := range samples {
		res.All[sc] = m["all"]
		res.NS[sc] = map[string]float64{}
		for s, xs := range m {
			res.NS[sc][s] = measure.Median(xs)
		}
	}
	return res
}

// rotate puts a different setting first each round (and reverses every other
// round), so no setting always follows the same one.
func rotate(s []setting, r int) {
	k := r % len(s)
	slices.Reverse(s[:k])
	slices.Reverse(s[k:])
	slices.Reverse(s)
	if r%2 == 1 {
		slices.Reverse(s)
	}
}

// timeOp returns the median of 5 batches of sc's op, in ns per op, each
// batch about sc.batch of op (and of between, untimed), after a sizing batch.
func timeOp(w *workers.Workers, sc scenario) float64 {
	batch := func(n int) time.Duration {
		if sc.between == nil {
			start := time.Now()
			for range n {
				sc.op(w)
			}
			return time.Since(start)
		}
		var d time.Duration
		for range n {
			sc.between()
			start := time.Now()
			sc.op(w)
			d += time.Since(start)
		}
		return d
	}
	size := sc.batch
	if size == 0 {
		size = 20 * time.Millisecond
	}
	n := 1
	for {
		if d := batch(n); d >= size/4 {
			n = max(1, int(float64(n)*float64(size)/float64(d)))
			break
		}
		n *= 4
	}
	var xs []float64
	for range 5 {
		xs = append(xs, float64(batch(n).Nanoseconds())/float64(n))
	}
	return measure.Median(xs)
}

// startBurners starts k processes that each burn a CPU (this program with
// -burn) and returns a function that stops them. They also stop by
// themselves after a minute.
func startBurners(k int) (stop func()) {
	if k == 0 {
		return func() {}
	}
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	var cmds []*exec.Cmd
	for range k {
		c := exec.Command(exe, "-burn", "1m")
		if err := c.Start(); err != nil {
			panic(err)
		}
		cmds = append(cmds, c)
	}
	time.Sleep(20 * time.Millisecond)
	return func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

// workPerUS is the iterations of the work loop per microsecond.
var workPerUS float64

func calibrate() {
	const n = 1 << 22
	best := time.Hour
	for range 5 {
		start := time.Now()
		spinWork(n)
		best = min(best, time.Since(start))
	}
	workPerUS = float64(n) / float64(best.Microseconds()+1)
}

func work(d time.Duration) { spinWork(int(workPerUS * float64(d) / float64(time.Microsecond))) }

//go:noinline
func spinWork(n int) {
	x := 1
	for i := range n {
		x = x*31 + i
	}
	runtime.KeepAlive(x)
}

// drive builds the measuring binary for each release, runs them in turn and
// prints the gate table.
func drive(goRel string, runs, rounds int) error {
	dir, err := os.MkdirTemp("", "workgang-gate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rels := []string{"local"}
	if goRel != "" {
		rels = append(rels, goRel)
	}
	var sides []alternate.Side
	for _, rel := range rels {
		bin := filepath.Join(dir, "gate-"+rel)
		fmt.Fprintf(os.Stderr, "gate: building with GOTOOLCHAIN=%s\n", rel)
		if err := alternate.Build("", "./perf/gate", bin, "GOTOOLCHAIN="+rel); err != nil {
			return fmt.Errorf("build with GOTOOLCHAIN=%s (run from the repository root): %w", rel, err)
		}
		// WORKGANG_WAIT empty: the process starts with every hint on.
		sides = append(sides, alternate.Side{Name: rel, Bin: bin, Env: []string{"WORKGANG_WAIT="}})
	}
	byRel := map[string][]result{}
	args := []string{"-measure", "-rounds", fmt.Sprint(rounds), "-only", strings.Join(only, ",")}
	err = alternate.Run("gate", sides, runs, func(alternate.Side, int) []string { return args },
		func(s alternate.Side, _ int, out []byte) error {
			var res result
			if err := json.Unmarshal(out, &res); err != nil {
				return err
			}
			byRel[s.Name] = append(byRel[s.Name], res)
			return nil
		})
	if err != nil {
		return err
	}
	report(os.Stdout, rels, byRel, runs, rounds)
	return nil
}

// report prints, per scenario and setting, off/all per release (median over
// the runs, with the range), then the verdict per hint.
func report(out io.Writer, rels []string, byRel map[string][]result, runs, rounds int) {
	first := byRel[rels[0]][0]
	host, _ := os.Hostname()
	fmt.Fprintf(out, "gate: %d CPUs (GOMAXPROCS %d), %s; releases %s; %d processes per release x %d rounds; %s\n",
		runtime.NumCPU(), first.Procs, host, strings.Join(goVersions(rels, byRel), ", "), runs, rounds, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintln(out, "ratio = time with the setting / time with every hint on (median over processes [min-max]); above 1: the hints it turns off pay")
	var scNames []string
	for _, sc := range scenarios() {
		scNames = append(scNames, sc.name)
	}
	ratio := func(rel, sc, set string) (med, lo, hi float64) {
		var xs []float64
		for _, r := range byRel[rel] {
			xs = append(xs, r.NS[sc][set]/r.NS[sc]["all"])
		}
		return measure.Median(xs), slices.Min(xs), slices.Max(xs)
	}
	// spread is the run-to-run spread of the all-on time of sc on rel: the
	// range of its samples (every round of every process) over their median,
	// without the least and the largest when there are five or more, so that
	// one disturbed round does not widen it.
	spread := func(rel, sc string) float64 {
		var alls []float64
		for _, r := range byRel[rel] {
			if len(r.All[sc]) == 0 {
				alls = append(alls, r.NS[sc]["all"])
			}
			alls = append(alls, r.All[sc]...)
		}
		sort.Float64s(alls)
		if len(alls) >= 5 {
			alls = alls[1 : len(alls)-1]
		}
		return (alls[len(alls)-1] - alls[0]) / measure.Median(alls)
	}
	fmt.Fprintf(out, "\n%-20s %12s %7s", "scenario", "all (ns/op)", "spread")
	for _, s := range settings()[1:] {
		fmt.Fprintf(out, " %17s", s.name)
	}
	fmt.Fprintln(out)
	for _, rel := range rels {
		fmt.Fprintf(out, "-- %s\n", byRel[rel][0].Go)
		for _, sc := range scNames {
			var alls []float64
			for _, r := range byRel[rel] {
				alls = append(alls, r.NS[sc]["all"])
			}
			fmt.Fprintf(out, "%-20s %12.0f %6.0f%%", sc, measure.Median(alls), 100*spread(rel, sc))
			for _, s := range settings()[1:] {
				m, lo, hi := ratio(rel, sc, s.name)
				fmt.Fprintf(out, " %5.2f [%.2f-%.2f]", m, lo, hi)
			}
			fmt.Fprintln(out)
		}
	}
	fmt.Fprintln(out, "\nverdict (keep: pays >= 5% on a target on every release; elsewhere, on every release, costs no more than the all-on spread there)")
	for _, h := range hintNames {
		pays, costs := []string{}, []string{}
		for _, sc := range scNames {
			target := slices.Contains(targets[h], sc)
			allPay := true
			var cost []string
			for _, rel := range rels {
				m, _, _ := ratio(rel, sc, "-"+h)
				allPay = allPay && m >= 1.05
				if sp := spread(rel, sc); 1-m > sp {
					cost = append(cost, fmt.Sprintf("%.0f%% > spread %.0f%%", 100*(1-m), 100*sp))
				}
			}
			if target && allPay {
				pays = append(pays, sc)
			}
			if !target && len(cost) > 0 {
				costs = append(costs, sc+" ("+strings.Join(cost, "; ")+")")
			}
		}
		verdict := "delete"
		if len(pays) > 0 && len(costs) == 0 {
			verdict = "keep"
		}
		fmt.Fprintf(out, "%-8s %-6s targets %s; pays on %s; costs on %s\n", h, verdict,
			strings.Join(targets[h], ","), orNone(pays), orNone(costs))
	}
}

func goVersions(rels []string, byRel map[string][]result) []string {
	var v []string
	for _, rel := range rels {
		v = append(v, byRel[rel][0].Go)
	}
	return v
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}
