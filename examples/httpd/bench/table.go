package bench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/workgang/workgang/examples/internal/lat"
)

// PrintTable prints rows grouped by connection count, like wrk --latency:
// req/s, its ratio to serial's at the same count, and the latency
// percentiles in microseconds.
func PrintTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "c\tvariant\treq/s\tvs serial\tp50 us\tp75 us\tp90 us\tp99 us\tmax us\trequests\t")
	serial := map[int]float64{}
	for _, r := range rows {
		if r.Variant == "serial" {
			serial[r.Conns] = r.ReqPerSec
		}
	}
	for _, r := range rows {
		vs := "-"
		if s := serial[r.Conns]; s > 0 {
			vs = fmt.Sprintf("%.2fx", r.ReqPerSec/s)
		}
		l := r.Latency
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.Conns, r.Variant, r.ReqPerSec, vs,
			lat.Micros(l.P50), lat.Micros(l.P75), lat.Micros(l.P90), lat.Micros(l.P99), lat.Micros(l.Max), r.Requests)
	}
	tw.Flush()
}

// Best is, at one connection count, the best workgang variant against the
// best of serial and errgroup.
type Best struct {
	Conns       int     `json:"conns"`
	Workgang    string  `json:"workgang"`
	WorkgangRPS float64 `json:"workgang_rps"`
	Peer        string  `json:"peer"`
	PeerRPS     float64 `json:"peer_rps"`
	VsPeer      float64 `json:"vs_peer"`   // WorkgangRPS / PeerRPS
	VsSerial    float64 `json:"vs_serial"` // WorkgangRPS / serial's
	WorkgangP99 int64   `json:"workgang_p99_ns"`
	SerialP99   int64   `json:"serial_p99_ns"`
}

// Bests returns one Best per connection count, in the rows' order.
func Bests(rows []Row) []Best {
	var out []Best
	idx := map[int]int{}
	for _, r := range rows {
		i, ok := idx[r.Conns]
		if !ok {
			i = len(out)
			idx[r.Conns] = i
			out = append(out, Best{Conns: r.Conns})
		}
		b := &out[i]
		switch {
		case IsWorkgang(r.Variant):
			if r.ReqPerSec > b.WorkgangRPS {
				b.Workgang, b.WorkgangRPS, b.WorkgangP99 = r.Variant, r.ReqPerSec, int64(r.Latency.P99)
			}
		default:
			if r.ReqPerSec > b.PeerRPS {
				b.Peer, b.PeerRPS = r.Variant, r.ReqPerSec
			}
		}
	}
	for _, r := range rows {
		if r.Variant == "serial" {
			b := &out[idx[r.Conns]]
			b.SerialP99 = int64(r.Latency.P99)
			if r.ReqPerSec > 0 {
				b.VsSerial = b.WorkgangRPS / r.ReqPerSec
			}
		}
	}
	for i := range out {
		if out[i].PeerRPS > 0 {
			out[i].VsPeer = out[i].WorkgangRPS / out[i].PeerRPS
		}
	}
	return out
}

// PrintBests prints the Bests with the targets: the best workgang variant
// at least the best of serial and errgroup at every count, at least 1.5x
// serial at c = 1, and its p99 at most serial's from c = 16 on.
func PrintBests(w io.Writer, bs []Best) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "c\tbest workgang\tbest peer\tvs peer\tvs serial\tp99 us\tserial p99 us\t")
	for _, b := range bs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2fx\t%.2fx\t%.1f\t%.1f\t\n", b.Conns, b.Workgang, b.Peer, b.VsPeer, b.VsSerial,
			float64(b.WorkgangP99)/1e3, float64(b.SerialP99)/1e3)
	}
	tw.Flush()
}
