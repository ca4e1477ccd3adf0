package bench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/workgang/workgang/examples/internal/lat"
)

// PrintRows prints the time per search: later calls (median, p99, and the
// median as a ratio to serial's), first calls (median, p99) with and
// without pre-created workers, and the first call's median as a ratio to
// go+wg's.
func PrintRows(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "solver\tp50 us\tp99 us\tspeedup\tfirst p50 us\tfirst p99 us\tvs go+wg\tfirst pre-created p50 us\tvs go+wg\t")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Solver, lat.Micros(r.Later.P50), lat.Micros(r.Later.P99),
			ratio(float64(serial.Later.P50), float64(r.Later.P50)),
			lat.Micros(r.First.P50), lat.Micros(r.First.P99), ratio(float64(r.First.P50), float64(gowg.First.P50)),
			lat.Micros(r.FirstPre.P50), ratio(float64(r.FirstPre.P50), float64(gowg.First.P50)))
	}
	tw.Flush()
}

// PrintTails prints the one-hash search's latency and what its slow calls
// saw (classified in the order GC, wake-up, preemption).
func PrintTails(w io.Writer, ts []Tail) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "solver\tp50 us\tp90 us\tp99 us\tp99.9 us\tmax us\tallocs/call\tcalls >= p99\tGC\twake-up\tpreempted\tnone\tp99 of clean calls us\t")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%s\t%.1f\t%d\t%d\t%d\t%d\t%d\t%.1f\t\n", t.Solver,
			lat.Micros(t.Lat.P50), lat.Micros(t.Lat.P90), lat.Micros(t.Lat.P99), float64(t.P999)/1e3, lat.Micros(t.Lat.Max),
			t.AllocsPerCall, t.Slow, t.SlowGC, t.SlowWakeup, t.SlowPreempted, t.SlowNone, float64(t.CleanP99)/1e3)
	}
	tw.Flush()
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}
