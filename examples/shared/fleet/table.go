package fleet

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// PrintTable prints one line per result, like the seed's table: wall time
// and its ratio to the serial variant's with the same work (if present),
// user and sys CPU, context switches, peak goroutines and peak RSS.
func PrintTable(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "work/job\tvariant\twall ms\tvs serial\tuser ms\tsys ms\tnvcsw\tnivcsw\tpeak goroutines\tpeak RSS MiB\t")
	serial := map[int]time.Duration{}
	for _, r := range rs {
		if r.Variant == Serial {
			serial[r.Units] = r.Wall
		}
	}
	for _, r := range rs {
		vs := "-"
		if s := serial[r.Units]; s > 0 {
			vs = fmt.Sprintf("%.2fx", float64(r.Wall)/float64(s))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%.1f\t%.1f\t%d\t%d\t%d\t%.1f\t\n", r.Label(), r.Variant, ms(r.Wall), vs,
			ms(r.User), ms(r.Sys), r.NVCSw, r.NIVCSw, r.PeakGoroutines, float64(r.PeakRSS)/(1<<20))
	}
	tw.Flush()
}

// Label names the job size of a result; the tables key rows by it.
func (c Config) Label() string {
	if c.Nominal > 0 {
		return "~" + c.Nominal.String()
	}
	return fmt.Sprintf("%d units", c.Units)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
