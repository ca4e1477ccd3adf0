package workloads

import (
	"fmt"
	"time"

	"github.com/workgang/workgang/examples/shared/fleet"
	"github.com/workgang/workgang/perf/internal/harness"
)

// shared section sizes: the seed's 4096 instances created at once (-quick
// 1024), a 1 ms wait before each job, jobs of about 4 and 40 us of work;
// jobs per instance and runs per variant grow with -long; the harness's own
// tests (tiny) run 64 instances of one job.
const (
	sharedInstances, sharedQuickInstances, sharedTinyInstances = 4096, 1024, 64
	sharedJobs, sharedLongJobs, sharedTinyJobs                 = 3, 10, 1
	sharedLongRuns                                             = 3
	sharedWait                                                 = time.Millisecond
)

// sharedWork is the CPU time of one job, serially.
var sharedWork = []time.Duration{4 * time.Microsecond, 40 * time.Microsecond}

// sharedResult is what the shared section measured: per job size, one
// result per variant (the run with the median wall time).
type sharedResult struct {
	Rows    []fleet.Result   `json:"rows"`
	Targets []harness.Target `json:"targets"`
}

// runShared runs the shared example's variants: every instance's checksum
// is checked against the serial variant's.
func runShared(h *harness.Harness) (any, error) {
	base := fleet.Config{Instances: sharedInstances, Jobs: sharedJobs, Parts: h.Cfg.Max, Wait: sharedWait}
	runs := 1
	switch c := h.Cfg; {
	case c.Tiny():
		base.Instances, base.Jobs = sharedTinyInstances, sharedTinyJobs
	case c.Quick:
		base.Instances = sharedQuickInstances
	case c.Long:
		base.Jobs, runs = sharedLongJobs, sharedLongRuns
	}
	fmt.Fprintf(h.Out, "%d instances at once, %d jobs each, %d parts per job, %v wait before each, median wall of %d run(s); checksums checked against serial\n",
		base.Instances, base.Jobs, base.Parts, base.Wait, runs)
	var res sharedResult
	for _, w := range sharedWork {
		h.Status("shared: jobs of %v", w)
		c := base
		c.Nominal, c.Units = w, fleet.Calibrate(w)
		rs, err := fleet.Compare(c, fleet.Variants(), runs)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, rs...)
	}
	h.ClearStatus()
	fleet.PrintTable(h.Out, res.Rows)
	fmt.Fprintln(h.Out)
	res.Targets = sharedTargets(res.Rows)
	return &res, nil
}

// sharedTargets: one shared set at least as fast as a set per instance and
// as go + WaitGroup, at most 1.05x serial, with less peak RSS than sets per
// instance, for every job size.
func sharedTargets(rows []fleet.Result) []harness.Target {
	by := map[time.Duration]map[fleet.Variant]fleet.Result{}
	for _, r := range rows {
		if by[r.Nominal] == nil {
			by[r.Nominal] = map[fleet.Variant]fleet.Result{}
		}
		by[r.Nominal][r.Variant] = r
	}
	var ts []harness.Target
	for _, w := range sharedWork {
		m := by[w]
		sh := m[fleet.Shared]
		wall := func(v fleet.Variant) float64 { return float64(m[v].Wall) }
		for _, v := range []fleet.Variant{fleet.Own, fleet.GoWG} {
			ts = append(ts, harness.RatioTarget(fmt.Sprintf("shared ~%v: shared / %s wall", w, v), reasonShared, wall(fleet.Shared), wall(v), 1, false,
				fmt.Sprintf("%.1f ms / %.1f ms", ms64(sh.Wall), ms64(m[v].Wall))))
		}
		ts = append(ts, harness.RatioTarget(fmt.Sprintf("shared ~%v: shared / serial wall", w), reasonShared, wall(fleet.Shared), wall(fleet.Serial), 1.05, false,
			fmt.Sprintf("%.1f ms / %.1f ms", ms64(sh.Wall), ms64(m[fleet.Serial].Wall))))
		ts = append(ts, harness.RatioTarget(fmt.Sprintf("shared ~%v: shared / own-set peak RSS", w), reasonShared, float64(sh.PeakRSS), float64(m[fleet.Own].PeakRSS), 1, false,
			fmt.Sprintf("%.1f MiB / %.1f MiB", float64(sh.PeakRSS)/(1<<20), float64(m[fleet.Own].PeakRSS)/(1<<20))))
	}
	return ts
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
