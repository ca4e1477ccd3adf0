// Command compare is workgang's scoreboard against an earlier release: the
// mission's figures measured with the library of the working tree and with
// the library of a git ref, side by side, with a verdict per figure.
//
//	go run ./perf/compare -base f8ab2fc              # default groups, 3 processes per side (~3 min)
//	go run ./perf/compare -base f8ab2fc -full        # also the contended section (+10-20 min)
//	go run ./perf/compare -base f8ab2fc -only pause,pow -runs 5
//	go run ./perf/compare -base f8ab2fc -quick -runs 1  # small sizes: a smoke run (~1 min)
//
// It builds the perf command twice: from the working tree, and from a copy
// of the tree at -base (git archive) whose perf/ and examples/ modules and
// go.work are replaced by the working tree's, so that both binaries measure
// the same scenarios the same way and only the library differs. Then it runs
// them in turn, base new base new ..., each run a process of its own (perf
// -scenario ... -json FILE), and prints per figure the median of each side's
// processes, new/base, each side's spread (the range of its processes over
// their median) and the verdict: "better" or "worse" when new and base
// differ by more than the larger of the two spreads, else "same (within
// spread)". Beside a figure stand the peers' values (go+WaitGroup, a channel
// pool, serial: medians over both sides' processes) where its section has
// them.
//
// The groups (-only): pause (the collector-like pause script, p50 and p99),
// pow (RunContext's first and later calls), empty (empty plain and
// caller-runs runs on one long-lived set at n = 1 and GOMAXPROCS, in a
// plain process and between other libraries' fork-joins), grain (W = 1 to
// 20 us per copy, between other libraries' fork-joins), httpd (best workgang
// variant at 1 and 16 connections), shared (4096 instances on one set,
// -quick 1024) and contended (every workgang call's speedup per loaded
// condition and grain; 1-3 min per process, so only with -full or -only).
//
// Run it from inside the repository; it is a maintainers' tool, not part of
// CI (it needs the git history and takes minutes).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/perf/internal/alternate"
	"github.com/workgang/workgang/perf/internal/measure"
)

func main() {
	base := flag.String("base", "", "the git `ref` whose library is the baseline (required)")
	runs := flag.Int("runs", 3, "processes per side, interleaved")
	only := flag.String("only", "", "comma list of figure groups ("+strings.Join(groupNames(), ", ")+"); default: all but contended")
	full := flag.Bool("full", false, "every group, contended included (adds 1-3 min per process)")
	quick := flag.Bool("quick", false, "small sizes (perf -quick): a smoke run")
	jsonOut := flag.String("json", "", "also write the table as JSON to this `file`")
	flag.Usage = func() {
		fmt.Fprint(os.Stderr, `usage: go run ./perf/compare -base REF [-runs N] [-only GROUPS | -full] [-quick] [-json FILE]

Measures the working tree's library against REF's in alternating perf
processes; per figure: both medians, new/base, each side's spread and the
verdict (worse or better only beyond the larger spread). The contended group
(1-3 min per process) runs only with -full or -only contended.

`)
		flag.PrintDefaults()
	}
	flag.Parse()
	sel, err := selectGroups(*only, *full)
	switch {
	case *base == "":
		err = errors.New("-base REF is required")
	case *runs < 1:
		err = fmt.Errorf("-runs %d: want at least 1", *runs)
	case flag.NArg() > 0:
		err = fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		flag.Usage()
		os.Exit(2)
	}
	if err := compare(*base, *runs, sel, *quick, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func groupNames() []string {
	var s []string
	for _, g := range groups {
		s = append(s, g.name)
	}
	return s
}

// selectGroups returns the groups -only and -full select, in table order.
func selectGroups(only string, full bool) ([]group, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(groupNames(), n) {
			return nil, fmt.Errorf("-only: unknown group %q (have %s)", n, strings.Join(groupNames(), ", "))
		}
		want[n] = true
	}
	var sel []group
	for _, g := range groups {
		if want[g.name] || (len(want) == 0 && (full || !g.optIn)) {
			sel = append(sel, g)
		}
	}
	return sel, nil
}

// Header says where and how the table was measured.
type Header struct {
	Date       string `json:"date"`
	CPU        string `json:"cpu"`
	CPUs       int    `json:"logical_cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go_version"`
	Base       string `json:"base"` // the ref as given and its short hash
	New        string `json:"new"`  // the working tree's HEAD, "+changes" when it differs
	Runs       int    `json:"runs"`
	Quick      bool   `json:"quick"`
}

// Row is one figure of the table.
type Row struct {
	Figure     string  `json:"figure"`
	Unit       string  `json:"unit"`
	Higher     bool    `json:"higher_is_better"`
	Base       float64 `json:"base"` // median of the base processes
	New        float64 `json:"new"`
	Ratio      float64 `json:"ratio"`       // New / Base
	BaseSpread float64 `json:"base_spread"` // (max - min) / median of the base processes
	NewSpread  float64 `json:"new_spread"`
	Verdict    string  `json:"verdict"`
	Beside     []named `json:"beside,omitempty"`
}

// compare builds both binaries, runs them and prints the table.
func compare(ref string, runs int, sel []group, quick bool, jsonOut string) error {
	root, err := git("", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	baseHash, err := git(root, "rev-parse", "--short", ref+"^{commit}")
	if err != nil {
		return err
	}
	newName, err := git(root, "rev-parse", "--short", "HEAD")
	if err != nil {
		return err
	}
	if st, _ := git(root, "status", "--porcelain"); st != "" {
		newName += "+changes"
	}
	tmp, err := os.MkdirTemp("", "workgang-compare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	sides := []alternate.Side{{Name: "base " + baseHash, Bin: filepath.Join(tmp, "perf-base")}, {Name: "new " + newName, Bin: filepath.Join(tmp, "perf-new")}}
	fmt.Fprintf(os.Stderr, "compare: building %s and the working tree\n", baseHash)
	if err := buildBase(root, ref, baseHash, filepath.Join(tmp, "base"), sides[0].Bin); err != nil {
		return err
	}
	if err := alternate.Build(root, "./perf", sides[1].Bin); err != nil {
		return err
	}
	var scen []string
	for _, g := range sel {
		for _, s := range g.scenarios {
			if !slices.Contains(scen, s) {
				scen = append(scen, s)
			}
		}
	}
	file := func(s alternate.Side, run int) string {
		return filepath.Join(tmp, fmt.Sprintf("%s-%d.json", strings.Fields(s.Name)[0], run))
	}
	reports := map[string][]*report{}
	err = alternate.Run("compare", sides, runs, func(s alternate.Side, run int) []string {
		args := []string{"-scenario", strings.Join(scen, ","), "-json", file(s, run)}
		if quick {
			args = append(args, "-quick")
		}
		return args
	}, func(s alternate.Side, run int, _ []byte) error {
		b, err := os.ReadFile(file(s, run))
		if err != nil {
			return err
		}
		r := new(report)
		reports[s.Name] = append(reports[s.Name], r)
		return json.Unmarshal(b, r)
	})
	if err != nil {
		return err
	}
	if !strings.HasPrefix(baseHash, ref) {
		baseHash = ref + " (" + baseHash + ")"
	}
	h0 := reports[sides[1].Name][0].Header
	hd := Header{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), CPU: h0.CPU, CPUs: h0.LogicalCPUs, GOMAXPROCS: h0.GOMAXPROCS,
		Go: h0.GoVersion, Base: baseHash, New: newName, Runs: runs, Quick: quick}
	rows := table(sel, reports[sides[0].Name], reports[sides[1].Name])
	printTable(os.Stdout, hd, rows)
	if jsonOut == "" {
		return nil
	}
	b, err := json.MarshalIndent(struct {
		Header Header `json:"header"`
		Rows   []Row  `json:"rows"`
	}{hd, rows}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(jsonOut, b, 0o644)
}

// buildBase builds the perf command against ref's library: ref's tree in
// dir with the working tree's perf and examples modules and go.work.
func buildBase(root, ref, hash, dir, bin string) error {
	tar := dir + ".tar"
	if _, err := git(root, "archive", "-o", tar, ref); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("tar", "-xf", tar, "-C", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("tar: %v: %s", err, out)
	}
	for _, d := range []string{"perf", "examples"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return err
		}
		if err := os.CopyFS(filepath.Join(dir, d), os.DirFS(filepath.Join(root, d))); err != nil {
			return err
		}
	}
	for _, f := range []string{"go.work", "go.work.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	err := alternate.Build(dir, "./perf", bin)
	if m := alternate.Missing(err); len(m) > 0 {
		return fmt.Errorf("the working tree's perf does not compile against %s's library; it uses what %s lacks:\n\t%s", hash, hash, strings.Join(m, "\n\t"))
	}
	return err
}

// git runs git in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// table aggregates the processes' points into rows, in the order the new
// side's first process measured them.
func table(sel []group, base, cur []*report) []Row {
	type acc struct {
		p         point
		base, new []float64
		beside    map[string][]float64
	}
	var order []string
	accs := map[string]*acc{}
	add := func(rs []*report, isNew bool) {
		for _, r := range rs {
			for _, g := range sel {
				for _, p := range g.read(r) {
					a := accs[p.name]
					if a == nil {
						a = &acc{p: p, beside: map[string][]float64{}}
						accs[p.name] = a
						order = append(order, p.name)
					}
					if isNew {
						a.new = append(a.new, p.v)
					} else {
						a.base = append(a.base, p.v)
					}
					for _, b := range p.beside {
						a.beside[b.Name] = append(a.beside[b.Name], b.V)
					}
				}
			}
		}
	}
	add(cur, true)
	add(base, false)
	var rows []Row
	for _, name := range order {
		a := accs[name]
		row := Row{Figure: name, Unit: a.p.unit, Higher: a.p.higher, Base: measure.Median(a.base), New: measure.Median(a.new),
			BaseSpread: spread(a.base), NewSpread: spread(a.new)}
		row.Ratio = measure.Ratio(row.New, row.Base)
		row.Verdict = verdict(row.Base, row.New, row.BaseSpread, row.NewSpread, row.Higher)
		for _, b := range a.p.beside {
			row.Beside = append(row.Beside, named{b.Name, measure.Median(a.beside[b.Name])})
		}
		rows = append(rows, row)
	}
	return rows
}

// spread is the range of xs over their median; 0 for fewer than two.
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return measure.Ratio(slices.Max(xs)-slices.Min(xs), measure.Median(xs))
}

// verdict judges new against base: a relative difference no larger than the
// larger of the two sides' spreads is "same (within spread)"; a larger one is
// "better" or "worse" in the figure's direction. A side that measured
// nothing gives "n/a".
func verdict(base, new, baseSpread, newSpread float64, higher bool) string {
	if base <= 0 || new <= 0 || math.IsNaN(base) || math.IsNaN(new) {
		return "n/a"
	}
	d := new/base - 1
	if math.Abs(d) <= max(baseSpread, newSpread)+1e-9 { // a difference equal to the spread, rounding aside, is within it
		return "same (within spread)"
	}
	if (d > 0) == higher {
		return "better"
	}
	return "worse"
}

// printTable prints the header and the rows.
func printTable(w io.Writer, h Header, rows []Row) {
	quick := ""
	if h.Quick {
		quick = ", -quick sizes"
	}
	fmt.Fprintf(w, "compare: base %s against new %s; %s, %d logical CPUs, GOMAXPROCS %d; %s; %d processes per side, interleaved%s; %s\n",
		h.Base, h.New, h.CPU, h.CPUs, h.GOMAXPROCS, h.Go, h.Runs, quick, h.Date)
	fmt.Fprintln(w, "medians over each side's processes; spread = (max - min) / median of a side's processes; worse or better only beyond the larger spread")
	if h.Runs == 1 {
		fmt.Fprintln(w, "one process per side: no spread, so every difference gets a verdict; use -runs 3 or more for verdicts")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tunit\tbetter\tbase\tnew\tnew/base\tspread base\tspread new\tverdict\t beside (peers, both sides)\t")
	for _, r := range rows {
		better := "lower"
		if r.Higher {
			better = "higher"
		}
		var beside []string
		for _, b := range r.Beside {
			beside = append(beside, b.Name+" "+fmtV(b.V))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f\t%.0f%%\t%.0f%%\t%s\t %s\t\n", r.Figure, r.Unit, better, fmtV(r.Base), fmtV(r.New),
			r.Ratio, 100*r.BaseSpread, 100*r.NewSpread, r.Verdict, strings.Join(beside, ", "))
	}
	_ = tw.Flush()
}

// fmtV formats a figure with three significant digits, whole numbers from
// 1000 on.
func fmtV(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
