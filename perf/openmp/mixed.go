package openmp

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/workers"
)

// The mixed-process mode: workgang's constructs in a process that also runs
// other fork-join code between them, the way an application mixes
// libraries. Every measurement is Batches batches of Batch repetitions of a
// construct's test; in a mixed measurement each batch follows ForkJoins
// fork-joins of go+WaitGroup and as many of errgroup (the "others"), each of
// Threads goroutines with W of kernel work apiece, one mixed measurement per
// W of MixedOptions.WorkNS (a short gap, within the idle workers' spin, and a
// long one, past it). Only the batches are timed. The same batches with
// nothing in between are the construct's figure alone. Alone and mixed take
// turns per construct and round on the one set the overhead table measures
// on: one set per process, as embedders hold it (a second set would be a
// second spinner: its workers, still spinning after its own batches, take
// processors from the first set's runs). The figure is the time per
// construct, delay included: overheads near zero (the team loops) would make
// a ratio of overheads noise, and the time is what the application pays.
//
// The others are timed too, between the batches and alone (after the set has
// been idle long enough for its workers to park), so that a spin policy that
// keeps workgang's runs fast by taking processors from the rest of the
// process shows as the others' slowdown.

// MixedOptions size the mixed-process mode. The zero value of a field
// selects its default.
type MixedOptions struct {
	// Off skips the mode.
	Off bool
	// Batch is the repetitions of a construct between two rounds of the
	// others' fork-joins (default 4). For the team rows a batch is one
	// RunTeam of Batch steps, alone and mixed alike.
	Batch int
	// Batches is the batches of one measurement (default 24).
	Batches int
	// ForkJoins is how many go+WaitGroup fork-joins, and then how many
	// errgroup ones, run between two batches (default 2).
	ForkJoins int
	// WorkNS are the others' kernel work per goroutine in ns, one mixed
	// measurement each (default 1 us and 100 us: gaps between batches of
	// about 15 us and 0.5-1 ms on two threads).
	WorkNS []float64
}

func (m MixedOptions) defaults() MixedOptions {
	if m.Batch == 0 {
		m.Batch = 4
	}
	if m.Batches == 0 {
		m.Batches = 24
	}
	if m.ForkJoins == 0 {
		m.ForkJoins = 2
	}
	if len(m.WorkNS) == 0 {
		m.WorkNS = []float64{1000, 100000}
	}
	return m
}

func (m MixedOptions) valid() bool {
	for _, w := range m.WorkNS {
		if !(w > 0) {
			return false
		}
	}
	return m.Batch >= 1 && m.Batches >= 1 && m.ForkJoins >= 1
}

// MixedLimit is the goal on every construct: its time per construct in the
// mixed process over its time alone.
const MixedLimit = 1.10

// Mixed is the mixed-process mode's JSON result.
type Mixed struct {
	Batch     int        `json:"batch"`      // repetitions per timed batch
	Batches   int        `json:"batches"`    // batches per measurement
	ForkJoins int        `json:"fork_joins"` // go+WaitGroup fork-joins, and errgroup ones, between two batches
	Limit     float64    `json:"limit"`      // MixedLimit
	Gaps      []MixedGap `json:"gaps"`
	Rows      []MixedRow `json:"rows"`
}

// MixedGap is one size of the others' work, with the others' time.
type MixedGap struct {
	RequestedNS float64 `json:"requested_ns"` // kernel work per goroutine, as asked for (MixedOptions.WorkNS)
	WorkNS      float64 `json:"work_ns"`      // the same, as calibrated
	// OthersAloneNS is the median time of the others' fork-joins between
	// two batches (all of them) with workgang's set idle; OthersMixedNS the
	// same between workgang's batches, the median over every row and round.
	OthersAloneNS float64 `json:"others_alone_ns"`
	OthersMixedNS float64 `json:"others_mixed_ns"`
}

// MixedRow is one construct and mode, alone and mixed.
type MixedRow struct {
	Construct string `json:"construct"`
	Title     string `json:"title"`
	Mode      string `json:"mode"`
	// Alone and Mixed (one per gap) are the time per construct (delay
	// included), median and min-max over rounds, and the set's counters
	// summed over them.
	Alone MixedSide   `json:"alone"`
	Mixed []MixedSide `json:"mixed"`
}

// MixedSide is one side of a MixedRow.
type MixedSide struct {
	MedianNS float64   `json:"median_ns"`
	MinNS    float64   `json:"min_ns"`
	MaxNS    float64   `json:"max_ns"`
	RoundsNS []float64 `json:"rounds_ns"`
	// P50NS and P99NS are the 50th and 99th percentile (nearest rank) of the
	// time per construct over every timed batch of every round: the tail a
	// round's median hides.
	P50NS  float64   `json:"p50_ns"`
	P99NS  float64   `json:"p99_ns"`
	Copies CopyStats `json:"copies"`
	// Ratio is a mixed side's median over the alone side's; RatioMin and
	// RatioMax the extremes of the rounds' ratios. Null for the alone side.
	Ratio    *float64 `json:"ratio"`
	RatioMin *float64 `json:"ratio_min"`
	RatioMax *float64 `json:"ratio_max"`
}

// CopyStats are a set's counters over the timed batches of one row (every
// round): who ran the copies, and how often workers parked and were woken
// (workers.Stats). A caller-runs run whose worker is not awake in time runs
// every copy on the caller: WorkerCopies falls, CallerCopies rises.
type CopyStats struct {
	Runs         uint64 `json:"runs"`
	CallerCopies uint64 `json:"caller_copies"`
	WorkerCopies uint64 `json:"worker_copies"`
	Parks        uint64 `json:"parks"`
	Wakeups      uint64 `json:"wakeups"`
}

func (c *CopyStats) add(before, after workers.Stats) {
	c.Runs += after.Runs - before.Runs
	c.CallerCopies += after.CallerCopies - before.CallerCopies
	c.WorkerCopies += after.WorkerCopies - before.WorkerCopies
	c.Parks += after.Parks - before.Parks
	c.Wakeups += after.Wakeups - before.Wakeups
}

// WorkerShare is the fraction of the copies that workers ran (0 without
// copies).
func (c CopyStats) WorkerShare() float64 {
	if t := c.CallerCopies + c.WorkerCopies; t > 0 {
		return float64(c.WorkerCopies) / float64(t)
	}
	return 0
}

// mixedSide measures the mode on the alone side's set, with the others'
// fork-joins to run between batches.
type mixedSide struct {
	o       MixedOptions
	w       *workers.Workers
	threads int
	iters   []int     // per gap: kernel iterations per goroutine of the others
	workNS  []float64 // iters as calibrated
	rows    []*mixedRow
	// othersAlone and othersMixed: per gap, the others' time per between,
	// one figure per measurement.
	othersAlone, othersMixed [][]float64
}

// mixedRow is one row under measurement.
type mixedRow struct {
	c       construct
	mode    string
	test    func(int)
	aloneNS []float64   // per round
	mixedNS [][]float64 // per gap, per round
	// aloneBatches and mixedBatches (per gap) are the time per construct of
	// every timed batch of every round.
	aloneBatches []float64
	mixedBatches [][]float64
	aloneStats   CopyStats
	mixedStats   []CopyStats // per gap
}

// newMixedSide pairs every measured mode of the alone side's tests with its
// mixed measurements.
func newMixedSide(g *goSide, o MixedOptions) *mixedSide {
	m := &mixedSide{o: o, w: g.w, threads: g.p.threads,
		othersAlone: make([][]float64, len(o.WorkNS)), othersMixed: make([][]float64, len(o.WorkNS))}
	for _, w := range o.WorkNS {
		it := itersFor(w, g.nsPerIter)
		m.iters = append(m.iters, it)
		m.workNS = append(m.workNS, float64(it)*g.nsPerIter)
	}
	for _, s := range g.tests {
		for _, md := range s.modes {
			if md.test != nil {
				m.rows = append(m.rows, &mixedRow{c: s.c, mode: md.name, test: md.test,
					mixedNS: make([][]float64, len(o.WorkNS)), mixedBatches: make([][]float64, len(o.WorkNS)), mixedStats: make([]CopyStats, len(o.WorkNS))})
			}
		}
	}
	return m
}

// others is what the application does between two batches: fork-joins of
// go+WaitGroup, then of errgroup, each goroutine with iters of real work.
func (m *mixedSide) others(iters int) {
	for range m.o.ForkJoins {
		var wg sync.WaitGroup
		wg.Add(m.threads)
		for range m.threads {
			go func() {
				defer wg.Done()
				work(iters)
			}()
		}
		wg.Wait()
	}
	for range m.o.ForkJoins {
		var eg errgroup.Group
		for range m.threads {
			eg.Go(func() error {
				work(iters)
				return nil
			})
		}
		_ = eg.Wait() // the goroutines return nil
	}
}

// batched runs m.o.Batches batches of test(m.o.Batch), calling between (if
// not nil) before each, and returns the batches' time per repetition, the
// betweens' time per call, in ns, and appends each batch's time per
// repetition to batches. Alone and mixed read the clock alike.
func (m *mixedSide) batched(test func(int), between func(), batches *[]float64) (perRep, perBetween float64) {
	var timed, others time.Duration
	for range m.o.Batches {
		if between != nil {
			start := time.Now()
			between()
			others += time.Since(start)
		}
		start := time.Now()
		test(m.o.Batch)
		d := time.Since(start)
		timed += d
		*batches = append(*batches, float64(d)/float64(m.o.Batch))
	}
	return float64(timed) / float64(m.o.Batches*m.o.Batch), float64(others) / float64(m.o.Batches)
}

// othersIdle is how long the others run untimed before they are timed alone:
// far longer than an idle worker spins (its spin budget, spin.Default or
// WithSpin, is tens of microseconds by default), so that workgang's workers
// have parked.
const othersIdle = 3 * time.Millisecond

// othersAloneReps is how many calls of the others are timed alone.
const othersAloneReps = 10

// round measures every row once, alone and at every gap, in an order that
// alternates from round to round, and the others alone at every gap.
func (m *mixedSide) round(r int) {
	for gi, it := range m.iters {
		for start := time.Now(); time.Since(start) < othersIdle; {
			m.others(it)
		}
		start := time.Now()
		for range othersAloneReps {
			m.others(it)
		}
		m.othersAlone[gi] = append(m.othersAlone[gi], float64(time.Since(start))/othersAloneReps)
	}
	measure := func(row *mixedRow, gi int) {
		before := m.w.Stats()
		if gi < 0 {
			ns, _ := m.batched(row.test, nil, &row.aloneBatches)
			row.aloneNS = append(row.aloneNS, ns)
			row.aloneStats.add(before, m.w.Stats())
			return
		}
		it := m.iters[gi]
		ns, others := m.batched(row.test, func() { m.others(it) }, &row.mixedBatches[gi])
		row.mixedNS[gi] = append(row.mixedNS[gi], ns)
		row.mixedStats[gi].add(before, m.w.Stats())
		m.othersMixed[gi] = append(m.othersMixed[gi], others)
	}
	for _, row := range m.rows {
		if r%2 == 0 {
			measure(row, -1)
		}
		for gi := range m.iters {
			measure(row, gi)
		}
		if r%2 != 0 {
			measure(row, -1)
		}
	}
}

// result returns the figures of the rounds so far.
func (m *mixedSide) result() *Mixed {
	res := &Mixed{Batch: m.o.Batch, Batches: m.o.Batches, ForkJoins: m.o.ForkJoins, Limit: MixedLimit, Rows: []MixedRow{}}
	for gi := range m.iters {
		g := MixedGap{RequestedNS: m.o.WorkNS[gi], WorkNS: m.workNS[gi]}
		if len(m.othersAlone[gi]) > 0 {
			g.OthersAloneNS, _, _ = summary(m.othersAlone[gi])
		}
		if len(m.othersMixed[gi]) > 0 {
			g.OthersMixedNS, _, _ = summary(m.othersMixed[gi])
		}
		res.Gaps = append(res.Gaps, g)
	}
	for _, row := range m.rows {
		if len(row.aloneNS) == 0 {
			continue
		}
		out := MixedRow{Construct: row.c.name, Title: row.c.title, Mode: row.mode, Alone: sideOf(row.aloneNS, row.aloneBatches, row.aloneStats)}
		for gi := range m.iters {
			side := sideOf(row.mixedNS[gi], row.mixedBatches[gi], row.mixedStats[gi])
			ratio := side.MedianNS / out.Alone.MedianNS
			rs := make([]float64, len(row.aloneNS))
			for i := range rs {
				rs[i] = row.mixedNS[gi][i] / row.aloneNS[i]
			}
			_, lo, hi := summary(rs)
			side.Ratio, side.RatioMin, side.RatioMax = &ratio, &lo, &hi
			out.Mixed = append(out.Mixed, side)
		}
		res.Rows = append(res.Rows, out)
	}
	return res
}

// sideOf summarises one side's rounds and batches.
func sideOf(rounds, batches []float64, st CopyStats) MixedSide {
	med, lo, hi := summary(rounds)
	sorted := slices.Clone(batches)
	slices.Sort(sorted)
	return MixedSide{MedianNS: med, MinNS: lo, MaxNS: hi, RoundsNS: rounds, P50NS: rank(sorted, 50), P99NS: rank(sorted, 99), Copies: st}
}

// rank returns the p-th percentile (nearest rank) of sorted, or 0 if it is
// empty.
func rank(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	r := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(r, 1), len(sorted))-1]
}

// Tails returns the row's p50 mixed over alone and its p99 mixed over
// alone, each at the gap where it is worst: the tail judged apart from the
// median.
func (r MixedRow) Tails() (p50, p99 float64) {
	for _, s := range r.Mixed {
		if r.Alone.P50NS > 0 {
			p50 = max(p50, s.P50NS/r.Alone.P50NS)
		}
		if r.Alone.P99NS > 0 {
			p99 = max(p99, s.P99NS/r.Alone.P99NS)
		}
	}
	return p50, p99
}

// Worst returns the row's largest ratio over the gaps, and the gap's index.
func (r MixedRow) Worst() (ratio float64, gap int) {
	for gi, s := range r.Mixed {
		if s.Ratio != nil && (gi == 0 || *s.Ratio > ratio) {
			ratio, gap = *s.Ratio, gi
		}
	}
	return ratio, gap
}

// print writes the mixed-process table.
func (r *Mixed) print(out io.Writer, threads int, withheld bool) {
	fmt.Fprintf(out, "\nmixed process: before every batch of %d constructs, %d go+WaitGroup and %d errgroup fork-joins of %d goroutines, each with W of work\n",
		r.Batch, r.ForkJoins, r.ForkJoins, threads)
	fmt.Fprintf(out, "(%d batches per measurement; ns per construct, delay included, over the timed batches only; alone: the same batches with nothing in between,\n", r.Batches)
	fmt.Fprintf(out, "on the same set; workers: the share of the copies the set's workers ran, the rest ran on the caller; parks per 100 runs). Goal: mixed/alone <= %.2f\n", r.Limit)
	for _, g := range r.Gaps {
		x := fmt.Sprintf("%.2fx", g.OthersMixedNS/g.OthersAloneNS)
		if withheld {
			x = "ratio withheld"
		}
		fmt.Fprintf(out, "  W=%s: the others' fork-joins between two batches took %.1f us, %.1f us with workgang's set idle (%s)\n",
			fmtWork(g.RequestedNS), g.OthersMixedNS/1e3, g.OthersAloneNS/1e3, x)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "construct\tmode\t  alone")
	for _, g := range r.Gaps {
		fmt.Fprintf(tw, "\tW=%s\tmixed/alone", fmtWork(g.RequestedNS))
	}
	fmt.Fprint(tw, "\tworkers alone")
	for _, g := range r.Gaps {
		fmt.Fprintf(tw, "\tW=%s", fmtWork(g.RequestedNS))
	}
	fmt.Fprint(tw, "\tparks/100 alone")
	for _, g := range r.Gaps {
		fmt.Fprintf(tw, "\tW=%s", fmtWork(g.RequestedNS))
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "\t\t")
	for range r.Gaps {
		fmt.Fprintf(tw, "\t\t%s", verdict.Lower)
	}
	fmt.Fprintln(tw)
	last := ""
	for _, row := range r.Rows {
		title := row.Title
		if title == last {
			title = ""
		}
		last = row.Title
		fmt.Fprintf(tw, "%s\t%s\t%7.0f", title, row.Mode, row.Alone.MedianNS)
		for _, s := range row.Mixed {
			if withheld {
				fmt.Fprintf(tw, "\t%7.0f\twithheld", s.MedianNS)
				continue
			}
			fmt.Fprintf(tw, "\t%7.0f\t%5.2fx %s", s.MedianNS, *s.Ratio, fmt.Sprintf("(%.2f..%.2f)", *s.RatioMin, *s.RatioMax))
		}
		fmt.Fprintf(tw, "\t%12.0f%%", 100*row.Alone.Copies.WorkerShare())
		for _, s := range row.Mixed {
			fmt.Fprintf(tw, "\t%5.0f%%", 100*s.Copies.WorkerShare())
		}
		fmt.Fprintf(tw, "\t%15.1f", per100(row.Alone.Copies))
		for _, s := range row.Mixed {
			fmt.Fprintf(tw, "\t%5.1f", per100(s.Copies))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	r.printTails(out, withheld)
}

// printTails writes every row's p50 and p99 over the timed batches, alone
// and at every gap, and the ratios of the worst gap.
func (r *Mixed) printTails(out io.Writer, withheld bool) {
	fmt.Fprintf(out, "\ntails: ns per construct over every timed batch (%d per round), p50 / p99; mixed/alone at the worst gap of each\n", r.Batches)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "construct\tmode\talone")
	for _, g := range r.Gaps {
		fmt.Fprintf(tw, "\tW=%s", fmtWork(g.RequestedNS))
	}
	fmt.Fprintln(tw, "\tp50 mixed/alone\tp99 mixed/alone")
	fmt.Fprint(tw, "\t\t")
	for range r.Gaps {
		fmt.Fprint(tw, "\t")
	}
	fmt.Fprintf(tw, "\t%s\t%s\n", verdict.Lower, verdict.Lower)
	last := ""
	for _, row := range r.Rows {
		title := row.Title
		if title == last {
			title = ""
		}
		last = row.Title
		fmt.Fprintf(tw, "%s\t%s\t%.0f / %.0f", title, row.Mode, row.Alone.P50NS, row.Alone.P99NS)
		for _, s := range row.Mixed {
			fmt.Fprintf(tw, "\t%.0f / %.0f", s.P50NS, s.P99NS)
		}
		p50, p99 := row.Tails()
		if withheld {
			fmt.Fprintln(tw, "\twithheld\twithheld")
			continue
		}
		fmt.Fprintf(tw, "\t%.2fx\t%.2fx\n", p50, p99)
	}
	tw.Flush()
}

// per100 returns c's parks per 100 runs.
func per100(c CopyStats) float64 {
	if c.Runs == 0 {
		return 0
	}
	return 100 * float64(c.Parks) / float64(c.Runs)
}

// fmtWork formats a work size in ns as "1us" or "0.5us".
func fmtWork(ns float64) string {
	return fmt.Sprintf("%.3gus", ns/1e3)
}

// verdict judges the mixed-process mode against its goal (MixedLimit,
// mixed over alone at each row's worst gap), at p50 and at p99 over the
// timed batches: how many rows meet it, and the worst row of each.
func (r *Mixed) verdict() []string {
	if len(r.Rows) == 0 {
		return nil
	}
	type worst struct {
		row   string
		ratio float64
	}
	var met50, met99 int
	var w50, w99 worst
	for _, row := range r.Rows {
		p50, p99 := row.Tails()
		name := row.Title + " " + row.Mode
		if p50 <= r.Limit {
			met50++
		}
		if p99 <= r.Limit {
			met99++
		}
		if p50 > w50.ratio {
			w50 = worst{name, p50}
		}
		if p99 > w99.ratio {
			w99 = worst{name, p99}
		}
	}
	n := len(r.Rows)
	return []string{fmt.Sprintf("mixed process, workgang's constructs after other goroutines' fork-joins over the same constructs alone, at each row's worst gap (goal <= %.2f, %s): "+
		"p50 within the goal in %d of %d rows, the worst %s at %.2fx; p99 within it in %d of %d rows, the worst %s at %.2fx",
		r.Limit, verdict.Lower, met50, n, w50.row, w50.ratio, met99, n, w99.row, w99.ratio)}
}
