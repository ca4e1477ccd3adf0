package workloads

import (
	"fmt"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/examples/gc/mark"
	"github.com/workgang/workgang/perf/internal/harness"
	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/verdict"
	"github.com/workgang/workgang/workers"
)

// Mark section sizes. The default run marks graphs of defaultMarkObjects a
// few times (the mark and gc sections together within a third of the
// default run's budget, defaultRunSeconds); -quick marks smaller graphs; runs
// shorter than -quick's (the harness's own tests) mark tiny graphs once;
// -long marks graphs of 4M objects.
const (
	defaultMarkObjects = 500_000
	defaultMarkRuns    = 3
	quickMarkObjects   = 250_000
	tinyMarkObjects    = 20_000
	longMarkObjects    = 4_000_000
	longMarkRuns       = 5
)

// MarkConfig is the mark section's configuration.
type MarkConfig struct {
	Objects int          `json:"objects"`
	Shapes  []mark.Shape `json:"shapes"`
	Workers int          `json:"workers"`
	Runs    int          `json:"runs"` // timed marks of each kind per shape; medians are reported
	Seed    uint64       `json:"seed"`
}

// MarkResult is what the mark section measured: one row per shape.
type MarkResult struct {
	Config MarkConfig `json:"config"`
	Rows   []MarkRow  `json:"rows"`
}

// MarkRow is the measurement of one graph shape. Times are medians over the
// runs, in nanoseconds; speedups are ratios of the medians.
type MarkRow struct {
	Shape   mark.Shape `json:"shape"`
	Objects int        `json:"objects"`
	Edges   int        `json:"edges"`
	Marked  int        `json:"marked"`
	// Workers is the copies the stealing mark used.
	Workers int `json:"workers"`
	// Serial is MarkSerial's time, Static MarkStatic's with Workers
	// goroutines, Stealing the Marker's (bitmap clearing included for all).
	Serial   time.Duration `json:"serial_ns"`
	Static   time.Duration `json:"static_ns"`
	Stealing time.Duration `json:"stealing_ns"`
	// VsSerial is Serial/Stealing, VsStatic Static/Stealing: above 1 means
	// the stealing mark was faster.
	VsSerial float64 `json:"vs_serial"`
	VsStatic float64 `json:"vs_static"`
	// Steals is the median number of values stolen per stealing mark.
	Steals int64 `json:"steals"`
}

// newMarkConfig sizes the mark section from the harness's configuration.
func newMarkConfig(c harness.Config) MarkConfig {
	mc := MarkConfig{Workers: min(c.Max, 64), Shapes: mark.Shapes(), Seed: 1}
	switch {
	case c.Tiny():
		mc.Objects, mc.Runs = tinyMarkObjects, 1
	case c.Quick:
		mc.Objects, mc.Runs = quickMarkObjects, harness.QuickIters
	case c.Long:
		mc.Objects, mc.Runs = longMarkObjects, longMarkRuns
	default:
		mc.Objects, mc.Runs = defaultMarkObjects, defaultMarkRuns
	}
	return mc
}

// runMark times the parallel-marking worked example (package
// examples/gc/mark): serial mark, errgroup static partition and the
// work-stealing mark on a worker set, per graph shape, in interleaved rounds,
// checking that all three marked the serial mark's objects.
func runMark(h *harness.Harness) (any, error) {
	cfg := newMarkConfig(h.Cfg)
	res := MarkResult{Config: cfg}
	set := workers.New("mark", cfg.Workers, runners.Options()...)
	defer set.Close()
	marker := mark.NewMarker(set)

	fmt.Fprintf(h.Out, "%d objects per graph, %d workers, median of %d runs, GOMAXPROCS %d\n",
		cfg.Objects, cfg.Workers, cfg.Runs, runtime.GOMAXPROCS(0))
	tw := tabwriter.NewWriter(h.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	verdict.Heading(tw, true, verdict.Plain("shape"), verdict.Plain("objects"), verdict.Plain("edges"), verdict.Plain("marked"),
		verdict.Plain("serial"), verdict.Plain("static"), verdict.Plain("stealing"), verdict.HigherCol("vs serial"), verdict.HigherCol("vs static"), verdict.Plain("steals"))
	var mk verdict.Marker
	for _, shape := range cfg.Shapes {
		row, err := markShape(h, cfg, shape, marker)
		if err != nil {
			tw.Flush()
			return res, err
		}
		res.Rows = append(res.Rows, row)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t\n",
			row.Shape, row.Objects, row.Edges, row.Marked, ms(row.Serial), ms(row.Static), ms(row.Stealing),
			mk.Speedup("%.2fx", row.VsSerial, row.Workers), mk.Speedup("%.2fx", row.VsStatic, row.Workers), row.Steals)
	}
	tw.Flush()
	mk.Footnote(h.Out)
	return res, nil
}

// markShape measures one shape.
func markShape(h *harness.Harness, cfg MarkConfig, shape mark.Shape, marker *mark.Marker) (MarkRow, error) {
	h.Status("mark: building %s graph of %d objects", shape, cfg.Objects)
	g := mark.NewGraph(shape, cfg.Objects, cfg.Seed)
	ref, b := mark.NewBitmap(g.Len()), mark.NewBitmap(g.Len())
	want := mark.MarkSerial(g, ref)

	row := MarkRow{Shape: shape, Objects: g.Len(), Edges: g.Edges(), Marked: want}
	var serial, static, stealing []time.Duration
	var steals []int64
	for run := range cfg.Runs {
		h.Status("mark: %s graph, run %d of %d", shape, run+1, cfg.Runs)
		r, err := mark.TimeRound(g, ref, b, want, marker, cfg.Workers)
		if err != nil {
			return row, fmt.Errorf("%s graph: %w", shape, err)
		}
		serial, static, stealing = append(serial, r.Serial), append(static, r.Static), append(stealing, r.Stealing)
		steals = append(steals, r.Stats.Steals)
		row.Workers = r.Stats.Workers
	}
	row.Serial, row.Static, row.Stealing = measure.Median(serial), measure.Median(static), measure.Median(stealing)
	row.Steals = measure.Median(steals)
	row.VsSerial = float64(row.Serial) / float64(row.Stealing)
	row.VsStatic = float64(row.Static) / float64(row.Stealing)
	return row, nil
}

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
