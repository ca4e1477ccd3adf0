package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Print prints the rows as a table: per pair, size and callers, the times
// per call (port, original, serial), the ratio port / original (median over
// rounds, then the smallest and largest round's), the CPU-time ratio, heap
// objects per call and the share of the port's runs that ran on their
// caller. A port marked * makes its scratch once per chunk (Pair.PerChunk).
func Print(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tsize\tcallers\tport\toriginal\tport us\torig us\tserial us\ttime ratio\tmin-max\tCPU ratio\tallocs port\torig\ton caller\ton workers\twake-ups\tlag port\torig\t")
	perChunk := false
	for _, r := range rows {
		port := r.Port
		if r.PerChunk() {
			port, perChunk = port+"*", true
		}
		fmt.Fprintf(tw, "%s\t%dx%d\t%d\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.2fx\t%.2f-%.2f\t%.2fx\t%.1f\t%.1f\t%.0f%%\t%.0f%%\t%.2f\t%.0f%%\t%.0f%%\t\n",
			r.Op, r.Side, r.Side, r.Callers, port, r.Orig, r.PortNS/1e3, r.OrigNS/1e3, r.SerialNS/1e3,
			r.Ratio, r.RatioMin, r.RatioMax, r.CPURatio, r.PortAllocs, r.OrigAllocs, 100*r.OnCaller, 100*r.WorkerCopies, r.Wakeups, 100*r.PortLag, 100*r.OrigLag)
	}
	tw.Flush()
	if perChunk {
		fmt.Fprintln(w, "* makes the blur's scratch row once per chunk, to show what that costs; ForChunks and line/Do make it once per copy or part")
	}
}
