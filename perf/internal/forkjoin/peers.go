package forkjoin

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
)

// peerRow is one implementation at one level.
type peerRow struct {
	Impl string `json:"impl"`
	measure.SetupStats
	// XWorkers and XCaller are this row's median average divided by the
	// workers and workers+caller rows' (above 1: slower than workgang).
	XWorkers float64 `json:"x_workers"`
	XCaller  float64 `json:"x_workers_caller"`
}

// peerGroup is every implementation at one level.
type peerGroup struct {
	level
	Rows []peerRow `json:"rows"`
}

// peersResult is the peers section's result.
type peersResult struct {
	Groups []peerGroup `json:"groups"`
}

// row returns the row of implementation name at level label, or nil.
func (r *peersResult) row(label, name string) *peerRow {
	for gi := range r.Groups {
		g := &r.Groups[gi]
		if g.Label != label {
			continue
		}
		for i := range g.Rows {
			if g.Rows[i].Impl == name {
				return &g.Rows[i]
			}
		}
	}
	return nil
}

// bestPeer returns the fastest row at level label among the peers (not
// workgang's, not serial, not the ping-pong bound), or nil.
func (r *peersResult) bestPeer(label string) *peerRow {
	var best *peerRow
	for _, p := range runners.Peers {
		if x := r.row(label, p.Name); x != nil && (best == nil || x.MedianAvgNS < best.MedianAvgNS) {
			best = x
		}
	}
	return best
}

// runPeers measures every implementation at every level. Within a level the
// implementations take turns per iteration, so a noisy spell on the machine
// hits all of them rather than one.
//
// Besides the fresh set per setup of the original test, workgang's two modes
// also run on one long-lived set (see longSet) shared by every level and mode,
// the way an embedder holds a set: the rows runners.NameOneWorkgang and runners.NameOneCaller.
func runPeers(h *harness.Harness) (any, error) {
	ls := runners.NewLongSet(h.Cfg.Max)
	defer ls.Close()
	ims := peerImpls(ls)
	printLegend(h.Out, ims)
	fmt.Fprintf(h.Out, "median over %d iterations of the average of %d runs; x workgang = row avg / workgang avg\n",
		h.Cfg.Iters, h.Cfg.Runs)
	res := &peersResult{}
	printLevels(h.Out, h.Cfg.Max)
	for _, sl := range shownLevels(h.Cfg.Max) {
		if sl.SameAs != "" {
			fmt.Fprintf(h.Out, "\n%s\n", sl.sameNote())
			continue
		}
		g := measurePeers(h, sl.level, ims)
		printPeerGroup(h.Out, g)
		res.Groups = append(res.Groups, g)
	}
	if h.Header.GOMAXPROCS > 1 {
		printMachineState(h.Out, res)
	}
	return res, nil
}

// printMachineState says in words what the full level's ping-pong and best
// peer tell about the machine during this run. The ping-pong is a hand-off
// between two goroutines spinning on two processors: its cost is the
// processors' cache-line round trip. The best peer's copies mostly run on the
// caller's own processor (a readied goroutine goes to its readier's
// processor), so it barely depends on that. When the ping-pong costs more,
// the processors are far apart or shared in this run (on a VM: two vCPUs
// scheduled on distant or busy cores), and every parallel figure of the run
// is higher than on a quiet machine.
func printMachineState(w io.Writer, p *peersResult) {
	ping, best := p.row("full", runners.NamePingPong), p.bestPeer("full")
	if ping == nil || best == nil {
		return
	}
	fmt.Fprintf(w, "\nmachine: handing a run to another processor and back (%s) took %.0f ns; the cheapest peer (%s), which runs most copies on the caller's processor, took %.0f ns.\n",
		runners.NamePingPong, ping.MedianAvgNS, best.Impl, best.MedianAvgNS)
	if ping.MedianAvgNS > best.MedianAvgNS {
		fmt.Fprintln(w, "Hand-offs between processors are slow in this run (the processors are far apart or busy): every parallel figure is higher than on a quiet machine; compare it only with runs where this line says the same.")
	} else {
		fmt.Fprintln(w, "Hand-offs between processors are fast in this run: the figures are comparable with other runs where this line says the same.")
	}
}

// peerImpls returns the rows of the peers tables: workgang's two modes on
// fresh sets first (the ratio columns divide by them), then on the long-lived
// set ls, then the peers.
func peerImpls(ls *runners.LongSet) []runners.Impl {
	out := append([]runners.Impl{}, runners.Impls[:2]...)
	out = append(out, runners.OneSetImpls(ls)...)
	return append(out, runners.Impls[2:]...)
}

// measurePeers measures every implementation of ims at level lv, interleaved;
// ims starts with workgang's fresh-set workers and workers+caller rows.
func measurePeers(h *harness.Harness, lv level, ims []runners.Impl) peerGroup {
	cs := make([]*measure.Collector, len(ims))
	for i := range cs {
		cs[i] = measure.NewCollector(h.Cfg.Runs, h.Cfg.Iters, true)
	}
	for it := range h.Cfg.Iters {
		for i, im := range ims {
			h.Status("peers %s n=%d iteration %d/%d %s", lv.Label, lv.N, it+1, h.Cfg.Iters, im.Name)
			cs[i].Measure(func() runners.Runner { return im.Start(h.Cfg.Max, lv.N, runners.Empty) })
		}
	}
	g := peerGroup{level: lv}
	for i, im := range ims {
		g.Rows = append(g.Rows, peerRow{Impl: im.Name, SetupStats: cs[i].Stats()})
	}
	w, c := g.Rows[0].MedianAvgNS, g.Rows[1].MedianAvgNS // ims lists workgang's fresh-set modes first
	for i := range g.Rows {
		g.Rows[i].XWorkers = measure.Ratio(g.Rows[i].MedianAvgNS, w)
		g.Rows[i].XCaller = measure.Ratio(g.Rows[i].MedianAvgNS, c)
	}
	return g
}

// printLegend describes the implementations ims.
func printLegend(w io.Writer, ims []runners.Impl) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, im := range ims {
		fmt.Fprintf(tw, "  %s\t%s\n", im.Name, im.Desc)
	}
	tw.Flush()
}

// printPeerGroup prints one level's table.
func printPeerGroup(w io.Writer, g peerGroup) {
	fmt.Fprintf(w, "\n%s (n=%d)\n", g.Label, g.N)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	verdict.Heading(tw, true, verdict.Plain("impl"), verdict.Plain("avg ns"), verdict.Plain("p50 ns"), verdict.Plain("p90 ns"),
		verdict.Plain("p99 ns"), verdict.Plain("max us"), verdict.Plain("allocs/run"), verdict.LowerCol("x workgang"), verdict.LowerCol("x workgang+caller"))
	for _, r := range g.Rows {
		fmt.Fprintf(tw, "%s\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f\t%d\t%.2f\t%.2f\t\n",
			r.Impl, r.MedianAvgNS, r.P50NS, r.P90NS, r.P99NS, r.MaxNS/1000, r.AllocsPerRun, r.XWorkers, r.XCaller)
	}
	tw.Flush()
}
