package main

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
	defaultIters = 5
	defaultRuns  = 10000
	quickIters   = 3
	quickRuns    = 1000
)

// errHelp is returned by parseFlags when -h or -help was asked for; the usage
// has been printed already.
var errHelp = flag.ErrHelp

// config is the parsed command line.
type config struct {
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

// parseFlags parses the command line. Usage and flag errors go to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := config{args: args}
	fs.IntVar(&c.Max, "max", runtime.GOMAXPROCS(0), "full parallelism: copies per run at \"full\" and the worker set's size")
	fs.IntVar(&c.Iters, "iters", defaultIters, "iterations per setup (ratios use the median over them)")
	fs.IntVar(&c.Runs, "runs", defaultRuns, "timed runs per iteration; a grain measurement does about this many microseconds of work (half without -long)")
	scen := fs.String("scenario", "all", "comma-separated sections to run ("+strings.Join(sectionNames(), ", ")+"), all (every section but targets and the examples), or examples (httpd, shared, pow, ports: the examples' own measurements, about 40 s)")
	fs.StringVar(&c.JSON, "json", "", "also write the results as JSON to this `file`")
	fs.StringVar(&c.SVG, "svg", "", "also write plots (grain sweep, pause phases, kernel, mark, gc, openmp) as SVG files into this `directory`")
	fs.BoolVar(&c.Pin, "pin", false, "pin workgang's worker i to allowed CPU i mod k (workers.WithAffinity()); the caller stays unpinned")
	fs.BoolVar(&c.Quick, "quick", false, fmt.Sprintf("all sections with small sizes (-iters %d -runs %d unless given)", quickIters, quickRuns))
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
	sel, err := selectSections(list)
	c.Scenarios = sel
	return c, err
}

// tiny reports whether the runs are shorter than -quick's: the harness's own
// tests, where every section shrinks to its smallest size.
func (c *config) tiny() bool { return c.Runs < quickRuns }

// applyQuick shrinks the sizes the user did not set explicitly.
func applyQuick(fs *flag.FlagSet, c *config) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["iters"] {
		c.Iters = quickIters
	}
	if !set["runs"] {
		c.Runs = quickRuns
	}
}

// validate checks the numeric flags.
func (c *config) validate() error {
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

// selectSections turns the -scenario list into section names in table order,
// adding the sections that the selected ones need.
func selectSections(list string) ([]string, error) {
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "all":
			for _, n := range defaultSections() {
				want[n] = true
			}
		case name == "examples":
			for _, n := range exampleSections {
				want[n] = true
			}
		case name == "":
		case findSection(name) == nil:
			return nil, fmt.Errorf("-scenario: unknown section %q (have %s, all)", name, strings.Join(sectionNames(), ", "))
		default:
			want[name] = true
		}
	}
	addNeeds(want)
	var sel []string
	for _, s := range sections {
		if want[s.name] {
			sel = append(sel, s.name)
		}
	}
	if len(sel) == 0 {
		return nil, errors.New("-scenario: no section selected")
	}
	return sel, nil
}

// addNeeds adds, transitively, the sections the wanted ones need.
func addNeeds(want map[string]bool) {
	for changed := true; changed; {
		changed = false
		for _, s := range sections {
			if !want[s.name] {
				continue
			}
			for _, n := range s.needs {
				if !want[n] {
					want[n], changed = true, true
				}
			}
		}
	}
}
