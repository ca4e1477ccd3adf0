package mark

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/workgang/workgang/tasks/policy"
	"github.com/workgang/workgang/workers"
)

// Config sizes a mark section. The zero value means the defaults below.
type Config struct {
	// Objects is the number of objects per graph; 0 means DefaultObjects.
	Objects int `json:"objects"`
	// Shapes lists the graph shapes to run; empty means all of Shapes().
	Shapes []Shape `json:"shapes"`
	// Workers is the parallelism of the parallel marks; 0 means
	// min(GOMAXPROCS, policy.DefaultMaxWorkers()).
	Workers int `json:"workers"`
	// Runs is the number of timed marks of each kind per shape; 0 means
	// DefaultRuns. Times are reported as medians.
	Runs int `json:"runs"`
	// Seed makes the graphs; the same seed gives the same graphs.
	Seed uint64 `json:"seed"`
	// Verbose adds the phase log lines of the last parallel mark per shape.
	Verbose bool `json:"verbose"`
	// Progress, if set, is called with a short note before each step.
	Progress func(note string) `json:"-"`
}

// Defaults for Config's zero fields.
const (
	DefaultObjects = 4_000_000
	DefaultRuns    = 5
)

// Result is what Section measured: the effective configuration and one row
// per shape.
type Result struct {
	Config Config `json:"config"`
	Rows   []Row  `json:"rows"`
}

// Row is the measurement of one graph shape. Times are medians over the
// runs; speedups are ratios of the medians.
type Row struct {
	Shape   Shape `json:"shape"`
	Objects int   `json:"objects"`
	Edges   int   `json:"edges"`
	Marked  int   `json:"marked"`
	// Workers is the copies the parallel marks used.
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
	// Steals is the median number of values stolen per parallel mark.
	Steals int64 `json:"steals"`
	// Log holds the phase lines of the last parallel mark.
	Log []string `json:"log,omitempty"`
}

// Section builds each graph of cfg, times the serial, static and stealing
// marks on it in interleaved rounds, checks that all three marked the same
// objects, and writes a table to w. It returns an error if a check fails or
// the configuration is invalid. It starts a worker set and closes it before
// returning.
func Section(w io.Writer, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	res := Result{Config: cfg}
	set := workers.New("mark", cfg.Workers)
	defer set.Close()
	marker := NewMarker(set)

	fmt.Fprintf(w, "mark: %d objects per graph, %d workers, median of %d runs, GOMAXPROCS %d\n",
		cfg.Objects, cfg.Workers, cfg.Runs, runtime.GOMAXPROCS(0))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tobjects\tedges\tmarked\tserial\tstatic\tstealing\tvs serial\tvs static\tsteals\t")
	var logs []string
	for _, shape := range cfg.Shapes {
		row, err := runShape(cfg, shape, marker)
		if err != nil {
			tw.Flush()
			return res, err
		}
		res.Rows = append(res.Rows, row)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%.2fx\t%.2fx\t%d\t\n",
			row.Shape, row.Objects, row.Edges, row.Marked, ms(row.Serial), ms(row.Static), ms(row.Stealing),
			row.VsSerial, row.VsStatic, row.Steals)
		for _, l := range row.Log {
			logs = append(logs, fmt.Sprintf("  %s: %s", row.Shape, l))
		}
	}
	tw.Flush()
	for _, l := range logs {
		fmt.Fprintln(w, l)
	}
	return res, nil
}

func (c Config) withDefaults() (Config, error) {
	if c.Objects == 0 {
		c.Objects = DefaultObjects
	}
	if c.Objects < 2 || c.Objects > MaxObjects {
		return c, fmt.Errorf("mark: Objects = %d out of range [2, %d]", c.Objects, MaxObjects)
	}
	if len(c.Shapes) == 0 {
		c.Shapes = Shapes()
	}
	for _, s := range c.Shapes {
		if s < Random || s > Lists {
			return c, fmt.Errorf("mark: unknown shape %v", s)
		}
	}
	if c.Workers == 0 {
		c.Workers = min(runtime.GOMAXPROCS(0), policy.DefaultMaxWorkers())
	}
	if c.Workers < 1 || c.Workers > workers.MaxLimit {
		return c, fmt.Errorf("mark: Workers = %d out of range [1, %d]", c.Workers, workers.MaxLimit)
	}
	if c.Runs == 0 {
		c.Runs = DefaultRuns
	}
	if c.Runs < 1 {
		return c, fmt.Errorf("mark: Runs = %d, want >= 1", c.Runs)
	}
	return c, nil
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, args...))
	}
}

// runShape measures one shape.
func runShape(cfg Config, shape Shape, marker *Marker) (Row, error) {
	cfg.progress("mark: building %s graph of %d objects", shape, cfg.Objects)
	g := NewGraph(shape, cfg.Objects, cfg.Seed)
	ref, serialB, staticB, stealB := NewBitmap(g.Len()), NewBitmap(g.Len()), NewBitmap(g.Len()), NewBitmap(g.Len())
	want := MarkSerial(g, ref)

	row := Row{Shape: shape, Objects: g.Len(), Edges: g.Edges(), Marked: want}
	var serial, static, stealing []time.Duration
	var steals []int64
	check := func(kind string, b *Bitmap, n int) error {
		if obj, differ := ref.FirstDifference(b); differ {
			return fmt.Errorf("mark: %s graph: %s mark differs from the serial mark at object %d", shape, kind, obj)
		}
		if n != want {
			return fmt.Errorf("mark: %s graph: %s mark counted %d objects; serial marked %d", shape, kind, n, want)
		}
		return nil
	}
	for run := range cfg.Runs {
		cfg.progress("mark: %s graph, run %d of %d", shape, run+1, cfg.Runs)
		// Interleaved, so that drift in the machine's speed (other load,
		// frequency) hits the three kinds alike.
		t0 := time.Now()
		n := MarkSerial(g, serialB)
		serial = append(serial, time.Since(t0))
		if err := check("serial", serialB, n); err != nil {
			return row, err
		}

		t0 = time.Now()
		n, err := MarkStatic(g, staticB, cfg.Workers)
		static = append(static, time.Since(t0))
		if err != nil {
			return row, err
		}
		if err := check("static", staticB, n); err != nil {
			return row, err
		}

		st := marker.Mark(g, stealB, cfg.Workers)
		stealing = append(stealing, st.Time)
		steals = append(steals, st.Steals)
		row.Workers = st.Workers
		if err := check("stealing", stealB, st.Marked); err != nil {
			return row, err
		}
		if cfg.Verbose && run == cfg.Runs-1 {
			row.Log = st.Log()
		}
	}
	row.Serial, row.Static, row.Stealing = median(serial), median(static), median(stealing)
	row.Steals = median(steals)
	row.VsSerial = float64(row.Serial) / float64(row.Stealing)
	row.VsStatic = float64(row.Static) / float64(row.Stealing)
	return row, nil
}

// median returns the middle value (the lower one of the two middles).
func median[T time.Duration | int64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
