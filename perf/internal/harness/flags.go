package harness

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/workgang/workgang/tasks"
)

// Default and -quick sizes. -quick keeps every section but shrinks the
// iterations and runs (unless given explicitly) so that the whole test
// finishes in well under 20 seconds on a 2-CPU machine.
const (
	DefaultIters = 5
	DefaultRuns  = 10000
	QuickIters   = 3
	QuickRuns    = 1000
)

// errHelp is returned by parseFlags when -h or -help was asked for; the usage
// has been printed already.
var errHelp = flag.ErrHelp

// Config is the parsed command line.
type Config struct {
	Max       int      `json:"max"`       // full parallelism and the worker set's size
	Iters     int      `json:"iters"`     // iterations per setup
	Runs      int      `json:"runs"`      // timed runs per iteration
	Scenarios []string `json:"scenarios"` // sections to run, in table order
	JSON      string   `json:"json"`      // "" when not written
	SVG       string   `json:"svg"`       // directory of the plots; "" when none
	Quick     bool     `json:"quick"`
	Long      bool     `json:"long"`    // full sizes of the sections that have them (kernel N up to 2000, ...)
	Pin       bool     `json:"pin"`     // workgang's workers pinned with workers.WithAffinity()
	Compete   int      `json:"compete"` // goroutines burning CPU during the sections
	Targets   bool     `json:"targets"` // also check the performance goals (the targets section)
	// args are the flags as given, for the header's command line.
	args []string
}

// parseFlags parses the command line for the sections of t. Usage and flag
// errors go to stderr.
func parseFlags(args []string, stderr io.Writer, t table) (Config, error) {
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := Config{args: args}
	fs.IntVar(&c.Max, "max", runtime.GOMAXPROCS(0), "full parallelism: copies per run at \"full\" and the worker set's size")
	fs.IntVar(&c.Iters, "iters", DefaultIters, "iterations per setup (ratios use the median over them)")
	fs.IntVar(&c.Runs, "runs", DefaultRuns, "timed runs per iteration; a grain measurement does about this many microseconds of work (half without -long)")
	scen := fs.String("scenario", "all", "comma-separated sections to run ("+strings.Join(t.names(), ", ")+"), all (every section but targets and the examples), or examples ("+strings.Join(t.examples(), ", ")+": the examples' own measurements, about 40 s)")
	fs.StringVar(&c.JSON, "json", "", "also write the results as JSON to this `file`")
	fs.StringVar(&c.SVG, "svg", "", "also write plots (grain sweep, pause phases, kernel, mark, gc, openmp) as SVG files into this `directory`")
	fs.BoolVar(&c.Pin, "pin", false, "pin workgang's worker i to allowed CPU i mod k (workers.WithAffinity()); the caller stays unpinned")
	fs.BoolVar(&c.Quick, "quick", false, fmt.Sprintf("all sections with small sizes (-iters %d -runs %d unless given)", QuickIters, QuickRuns))
	fs.IntVar(&c.Compete, "compete", 0, "run `k` goroutines of CPU work in the same process during every section (competition for the processors)")
	fs.BoolVar(&c.Targets, "targets", false, "also check the project's performance goals on this run's figures (each printed with its reason; adds the sections they need)")
	fs.BoolVar(&c.Long, "long", false, "full sizes where the default is sized down (kernel N up to 2000, more pauses); takes minutes")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.Quick {
		applyQuick(fs, &c)
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	list := *scen
	if c.Targets {
		list += ",targets"
	}
	sel, err := t.selectSections(list)
	c.Scenarios = sel
	return c, err
}

// Tiny reports whether the runs are shorter than -quick's: the harness's own
// tests, where every section shrinks to its smallest size.
func (c *Config) Tiny() bool { return c.Runs < QuickRuns }

// TinyFlags are flags that make a run Tiny, at -max 2: every section at its
// smallest sizes, so that the sections' tests take a fraction of a second
// even under -race. They set no timing expectations.
var TinyFlags = []string{"-quick", "-runs", "20", "-iters", "1", "-max", "2"}

// applyQuick shrinks the sizes the user did not set explicitly.
func applyQuick(fs *flag.FlagSet, c *Config) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["iters"] {
		c.Iters = QuickIters
	}
	if !set["runs"] {
		c.Runs = QuickRuns
	}
}

// validate checks the numeric flags.
func (c *Config) validate() error {
	switch {
	case c.Max < 1 || c.Max > tasks.MaxCopies:
		return fmt.Errorf("-max %d out of range [1, %d]", c.Max, tasks.MaxCopies)
	case c.Iters < 1:
		return fmt.Errorf("-iters %d: want at least 1", c.Iters)
	case c.Runs < 1:
		return fmt.Errorf("-runs %d: want at least 1", c.Runs)
	case c.Compete < 0:
		return fmt.Errorf("-compete %d: want at least 0", c.Compete)
	}
	return nil
}

// table is the command's sections, in the order they run.
type table []Section

// names returns the names in the table, in order.
func (t table) names() []string {
	var names []string
	for _, s := range t {
		names = append(names, s.Name)
	}
	return names
}

// defaults returns the sections -scenario all selects: all but the opt-in
// ones, in table order.
func (t table) defaults() []string {
	var names []string
	for _, s := range t {
		if !s.OptIn {
			names = append(names, s.Name)
		}
	}
	return names
}

// examples returns the sections -scenario examples selects.
func (t table) examples() []string {
	var names []string
	for _, s := range t {
		if s.Example {
			names = append(names, s.Name)
		}
	}
	return names
}

// find returns the entry called name, or nil.
func (t table) find(name string) *Section {
	for i := range t {
		if t[i].Name == name {
			return &t[i]
		}
	}
	return nil
}

// selectSections turns the -scenario list into section names in table order,
// adding the sections that the selected ones need.
func (t table) selectSections(list string) ([]string, error) {
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "all":
			for _, n := range t.defaults() {
				want[n] = true
			}
		case name == "examples":
			for _, n := range t.examples() {
				want[n] = true
			}
		case name == "":
		case t.find(name) == nil:
			return nil, fmt.Errorf("-scenario: unknown section %q (have %s, all)", name, strings.Join(t.names(), ", "))
		default:
			want[name] = true
		}
	}
	t.addNeeds(want)
	var sel []string
	for _, s := range t {
		if want[s.Name] {
			sel = append(sel, s.Name)
		}
	}
	if len(sel) == 0 {
		return nil, errors.New("-scenario: no section selected")
	}
	return sel, nil
}

// addNeeds adds, transitively, the sections the wanted ones need.
func (t table) addNeeds(want map[string]bool) {
	for changed := true; changed; {
		changed = false
		for _, s := range t {
			if !want[s.Name] {
				continue
			}
			for _, n := range s.Needs {
				if !want[n] {
					want[n], changed = true, true
				}
			}
		}
	}
}
