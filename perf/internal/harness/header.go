package harness

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Header is the configuration the figures were measured in.
type Header struct {
	Date        string  `json:"date"`
	CPU         string  `json:"cpu"`
	LogicalCPUs int     `json:"logical_cpus"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	GoVersion   string  `json:"go_version"`
	OS          string  `json:"os"`
	Arch        string  `json:"arch"`
	Kernel      string  `json:"kernel"`
	ClockNS     float64 `json:"clock_ns"` // cost of one time.Now
	Pinned      bool    `json:"pinned"`
	Compete     int     `json:"compete"` // goroutines burning CPU meanwhile (-compete)
	Command     string  `json:"command"` // the program's name (not go run's temporary path) and the flags of this run
	LoadAvg     string  `json:"loadavg"` // /proc/loadavg at the start: other load skews every figure
	// Pickup is how soon an idle processor takes a goroutine readied by a
	// busy one (pickup.go); null with one processor.
	Pickup *Pickup `json:"pickup"`
}

// readHeader collects the configuration and measures the clock and the
// pickup of a readied goroutine.
func readHeader(cfg Config) Header {
	samples := 60
	if cfg.Tiny() {
		samples = 5
	}
	var pickup *Pickup
	if p, ok := measurePickup(samples, 2*time.Millisecond); ok {
		pickup = &p
	}
	return Header{
		Pickup:      pickup,
		Date:        time.Now().UTC().Format(time.RFC3339),
		CPU:         cpuModel(),
		LogicalCPUs: runtime.NumCPU(),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
		GoVersion:   runtime.Version(),
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		Kernel:      kernelRelease(),
		ClockNS:     clockCost(),
		Pinned:      cfg.Pin,
		Compete:     cfg.Compete,
		Command:     commandLine(cfg.args),
		LoadAvg:     LoadAvg(),
	}
}

// commandLine is the command that reproduces a run with the flags args:
// "go run ./perf" and args, each quoted for a POSIX shell when it needs to
// be. The program's own path (os.Args[0]) would be go run's temporary
// binary, which no one can run again.
func commandLine(args []string) string {
	var b strings.Builder
	b.WriteString("go run ./perf")
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

// shellQuote returns s as one word of a POSIX shell: s itself when it holds
// only characters no shell treats specially, else s in single quotes (where
// a single quote of s ends the quoting, is escaped, and the quoting resumes).
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_.,/=:+@%", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// print writes the header as aligned "key: value" lines.
func (hd Header) print(w io.Writer) {
	fmt.Fprintf(w, "workgang perf  %s\n", hd.Date)
	fmt.Fprintf(w, "command      %s\n", hd.Command)
	fmt.Fprintf(w, "cpu          %s\n", hd.CPU)
	fmt.Fprintf(w, "logical cpus %d, GOMAXPROCS %d\n", hd.LogicalCPUs, hd.GOMAXPROCS)
	fmt.Fprintf(w, "go           %s %s/%s\n", hd.GoVersion, hd.OS, hd.Arch)
	fmt.Fprintf(w, "kernel       %s\n", hd.Kernel)
	fmt.Fprintf(w, "clock        time.Now costs %.0f ns: per-run latencies (p50..p99, max) include one;\n", hd.ClockNS)
	fmt.Fprintf(w, "             totals and averages are timed per batch and do not\n")
	if hd.Compete > 0 {
		fmt.Fprintf(w, "competing    %d goroutines burn CPU in this process during every section (-compete)\n", hd.Compete)
	}
	if hd.Pinned {
		fmt.Fprintf(w, "pinned       workgang worker i on allowed CPU i mod k (workers.WithAffinity()); callers unpinned\n")
	}
	fmt.Fprintf(w, "load average %s (1, 5, 15 min; above 0 means other programs compete for the CPUs)\n", hd.LoadAvg)
	if p := hd.Pickup; p != nil {
		fmt.Fprintf(w, "pickup       a goroutine readied by a busy one runs on an idle CPU after %s (p50), %s (p90) of %d;\n",
			time.Duration(p.P50NS).Round(time.Microsecond), time.Duration(p.P90NS).Round(time.Microsecond), p.Samples)
		fmt.Fprintf(w, "             a phase that starts by waking parked goroutines (workgang's workers, go+WaitGroup's)\n")
		fmt.Fprintf(w, "             runs on its caller alone until then: where this is in milliseconds, short phases\n")
		fmt.Fprintf(w, "             after an idle gap get no help from any runtime (docs/perf.md)\n")
	}
}

// cpuModel describes the CPU from /proc/cpuinfo: model name plus, for x86,
// family/model/stepping (a VM often shows only a generic name), and whether
// it runs under a hypervisor. It returns "unknown" where /proc is missing.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + runtime.GOARCH + ")"
	}
	defer f.Close()
	info := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if len(info) > 0 {
				break // the end of the first processor's block
			}
			continue
		}
		info[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return describeCPU(info)
}

// describeCPU formats the fields of one /proc/cpuinfo processor block.
func describeCPU(info map[string]string) string {
	name := info["model name"]
	if name == "" {
		name = info["Model"] // arm64 boards
	}
	if name == "" {
		name = "unknown"
	}
	if fam := info["cpu family"]; fam != "" {
		name += fmt.Sprintf(" (family %s model %s stepping %s)", fam, info["model"], info["stepping"])
	}
	if mhz := info["cpu MHz"]; mhz != "" {
		name += ", " + strings.TrimSuffix(strings.TrimRight(mhz, "0"), ".") + " MHz"
	}
	if strings.Contains(" "+info["flags"]+" ", " hypervisor ") {
		name += ", virtualized"
	}
	return name
}

// kernelRelease returns the running kernel's release, or "unknown".
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// LoadAvg returns the 1, 5 and 15 minute load averages, or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// clockCost returns the cost of one time.Now in nanoseconds: the best of a
// few batches of calls.
func clockCost() float64 {
	const calls = 20000
	best := time.Duration(1<<63 - 1)
	for range 5 {
		start := time.Now()
		for range calls {
			runtime.KeepAlive(time.Now()) // a use of every read
		}
		best = min(best, time.Since(start))
	}
	return float64(best) / calls
}

// Caption is the line above every plot: the machine, Go version, date and
// command of the run.
func (hd Header) Caption() string {
	return fmt.Sprintf("%s, %d logical CPUs, GOMAXPROCS %d; %s %s/%s\n%s; %s", hd.CPU, hd.LogicalCPUs, hd.GOMAXPROCS, hd.GoVersion, hd.OS, hd.Arch, hd.Date, hd.Command)
}
