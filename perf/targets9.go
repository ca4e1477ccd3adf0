package main

import (
	"fmt"
	"io"
)

// The long-lived-set targets (surplus workers, the pause, the kernel), as
// ratios of medians within the run. They are evaluated from whichever of the surplus, pause and kernel
// sections ran (targets needs them all, so a run that selects targets has
// them).
const (
	surplusLimit      = 1.10 // surplus set / exact set, both modes, 5 and 50 us per copy
	pauseSerialLimit  = 1.7  // serial p50 / workgang p50, at least
	pausePeerLimit    = 0.7  // workgang p50 / best peer's p50, at most
	kernelPeerLimit   = 1.0  // best workgang mode / best peer, at every N
	kernelSerialLimit = 1.0  // forrange+caller / serial for N >= kernelSerialFromN
	kernelSerialFromN = 64
	emptyPeerLimit    = 1.0 // full only-workers / best peer
	emptyPingLimit    = 1.5 // full only-workers / ping-pong
)

// emptyPeers are the peers an empty-task run is compared with: the ways a Go
// program runs copies without workgang (not the direct calls, not the
// ping-pong).
var emptyPeers = []string{nameWaitGroup, nameErrgroup, nameChanPool}

// emptyTaskTargets checks only-workers at full parallelism, on fresh sets and
// on the long-lived set, against the best peer and the ping-pong, and prints
// which state the VM was in: the slow state, where the ping-pong alone costs
// more than the best peer (whose copies run as a same-processor goroutine
// switch), or the fast one.
func emptyTaskTargets(w io.Writer, p *peersResult) []target {
	ping := p.row("full", namePingPong)
	var best *peerRow
	for _, name := range emptyPeers {
		if r := p.row("full", name); r != nil && (best == nil || r.MedianAvgNS < best.MedianAvgNS) {
			best = r
		}
	}
	if ping == nil || best == nil {
		return nil
	}
	state := "fast state: the ping-pong costs less than the best peer's same-processor switch; both bounds count"
	if ping.MedianAvgNS > best.MedianAvgNS {
		state = "slow state: the ping-pong alone costs more than the best peer; the ping-pong bound decides"
	}
	fmt.Fprintf(w, "VM state: ping-pong %.1f ns vs best peer (%s) %.1f ns at full: %s\n", ping.MedianAvgNS, best.Impl, best.MedianAvgNS, state)
	var ts []target
	for _, name := range []string{nameWorkers, nameOneWorkers} {
		r := p.row("full", name)
		if r == nil {
			continue
		}
		n, sets := levelN(p, "full"), "fresh sets"
		if name == nameOneWorkers {
			sets = "one set"
		}
		ts = append(ts,
			ratioTarget(fmt.Sprintf("full, %s: %s / best peer", sets, name), r.MedianAvgNS, best.MedianAvgNS, emptyPeerLimit, false,
				fmt.Sprintf("%.1f ns / %.1f ns %s (n=%d)", r.MedianAvgNS, best.MedianAvgNS, best.Impl, n)),
			ratioTarget(fmt.Sprintf("full, %s: %s / %s", sets, name, namePingPong), r.MedianAvgNS, ping.MedianAvgNS, emptyPingLimit, false,
				fmt.Sprintf("%.1f ns / %.1f ns (n=%d)", r.MedianAvgNS, ping.MedianAvgNS, n)))
	}
	return ts
}

// surplusTargets checks every surplus case.
func surplusTargets(r *surplusResult) []target {
	var ts []target
	for _, c := range r.Cases {
		ts = append(ts, ratioTarget(
			fmt.Sprintf("surplus: %s n=%d %s/copy, %d created / %d", c.Mode, c.N, fmtNS(c.CopyNS), c.Created, c.Needed),
			c.SurplusNS, c.ExactNS, surplusLimit, false,
			fmt.Sprintf("%.2f us / %.2f us", c.SurplusNS/1000, c.ExactNS/1000)))
	}
	return ts
}

// pauseTargets checks workgang's p50 pause against serial and the best peer.
func pauseTargets(r *pauseResult) []target {
	serial, wg, best := r.impl(nameSerial), r.impl(namePauseWorkgang), r.bestPeer()
	if serial == nil || wg == nil || best == nil {
		return nil
	}
	return []target{
		ratioTarget("pause p50: serial / workgang", serial.P50NS, wg.P50NS, pauseSerialLimit, true,
			fmt.Sprintf("%.1f us / %.1f us (best possible %.2f)", serial.P50NS/1000, wg.P50NS/1000, r.IdealX)),
		ratioTarget("pause p50: workgang / best peer", wg.P50NS, best.P50NS, pausePeerLimit, false,
			fmt.Sprintf("%.1f us / %.1f us %s", wg.P50NS/1000, best.P50NS/1000, best.Impl)),
	}
}

// kernelTargets checks, at every N, workgang's best mode against the best
// peer, and from kernelSerialFromN on ForRange with caller-runs against
// serial.
func kernelTargets(r *kernelResult) []target {
	var ts []target
	for i := range r.Sizes {
		ks := &r.Sizes[i]
		wg, peer := ks.best(true), ks.best(false)
		if wg != nil && peer != nil {
			ts = append(ts, ratioTarget(fmt.Sprintf("kernel N=%d: best workgang / best peer", ks.N),
				wg.SolveNS, peer.SolveNS, kernelPeerLimit, false,
				fmt.Sprintf("%.1f us %s / %.1f us %s", wg.SolveNS/1000, wg.Impl, peer.SolveNS/1000, peer.Impl)))
		}
		fr, serial := ks.row(nameForCaller), ks.row(nameSerial)
		if ks.N >= kernelSerialFromN && fr != nil && serial != nil {
			ts = append(ts, ratioTarget(fmt.Sprintf("kernel N=%d: %s / serial", ks.N, nameForCaller),
				fr.SolveNS, serial.SolveNS, kernelSerialLimit, false,
				fmt.Sprintf("%.1f us / %.1f us", fr.SolveNS/1000, serial.SolveNS/1000)))
		}
	}
	return ts
}
