package bench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/workgang/workgang/examples/internal/lat"
)

// PrintRows prints the time per search: later calls (median, p99, and
// serial's median over this one's: the speedup), first calls (median, p99)
// with and without pre-created workers, as ratios to go+wg's first call,
// and the same medians for first calls of the one-hash search (the fixed
// cost of a first call).
func PrintRows(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "solver\tp50 us\tp99 us\tspeedup\tfirst p50 us\tfirst p99 us\tvs go+wg\tpre-created\tvs go+wg\t1-hash first\tvs go+wg\tpre-created\tvs go+wg\t")
	var serial, gowg Row
	for _, r := range rows {
		switch r.Solver {
		case "serial":
			serial = r
		case "go+wg":
			gowg = r
		}
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Solver, lat.Micros(r.Later.P50), lat.Micros(r.Later.P99),
			ratio(float64(serial.Later.P50), float64(r.Later.P50)),
			lat.Micros(r.First.P50), lat.Micros(r.First.P99), ratio(float64(r.First.P50), float64(gowg.First.P50)),
			lat.Micros(r.FirstPre.P50), ratio(float64(r.FirstPre.P50), float64(gowg.First.P50)),
			lat.Micros(r.First0.P50), ratio(float64(r.First0.P50), float64(gowg.First0.P50)),
			lat.Micros(r.FirstPre0.P50), ratio(float64(r.FirstPre0.P50), float64(gowg.First0.P50)))
	}
	tw.Flush()
}

// PrintTails prints the one-hash search's latency and what its slow calls
// saw (each counted once, in the order GC, wake-up, mutex wait, page fault,
// preemption), how often a worker ran a copy, and how often a call took a
// page fault.
func PrintTails(w io.Writer, ts []Tail) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "call\tp50 us\tp90 us\tp99 us\tp99.9 us\tmax us\tallocs/call\t>= p99\tGC\twake-up\tmutex\tfault\tpreempted\tnone\tclean p99 us\tworker ran: all\tslow\tfaulted: all\t")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%s\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\t\n", t.Solver,
			lat.Micros(t.Lat.P50), lat.Micros(t.Lat.P90), lat.Micros(t.Lat.P99), float64(t.P999)/1e3, lat.Micros(t.Lat.Max),
			t.AllocsPerCall, t.Slow, t.SlowGC, t.SlowWakeup, t.SlowMutex, t.SlowFault, t.SlowPreempted, t.SlowNone, float64(t.CleanP99)/1e3,
			pct(t.WorkerCalls, t.Lat.N), pct(t.SlowWorker, t.Slow), pct(t.FaultCalls, t.Lat.N))
	}
	tw.Flush()
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func pct(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}
