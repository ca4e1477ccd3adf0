package verdict

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// LoadedShare is the share of the machine's CPUs that other programs must
// use, on average over a section, for its comparisons to be withheld: a
// section's peers and workgang take turns, but a competitor that takes a
// quarter of the machine disturbs each turn differently.
const LoadedShare = 0.25

// Probe measures how much CPU other programs use while a section runs:
// every CPU's busy time (/proc/stat, steal included: a VM's vCPU lent to
// another guest is competition too) minus this process's and its waited-for
// children's own (getrusage). Unlike the load average, it does not count
// this process's own spinning threads, and it covers exactly the section.
type Probe struct {
	start sample
}

// sample is the machine's and this process's CPU time at one instant.
type sample struct {
	wall      time.Time
	busy, all float64 // jiffies of every CPU, busy and in all states
	self      time.Duration
	ok        bool // false where /proc/stat or getrusage is missing
	numCPU    int
}

// Start begins a measurement.
func Start() *Probe { return &Probe{start: take()} }

// Others returns how many CPUs other programs used on average since Start,
// and false where the system cannot tell.
func (p *Probe) Others() (float64, bool) {
	end := take()
	s := p.start
	wall := end.wall.Sub(s.wall).Seconds()
	if !s.ok || !end.ok || wall <= 0 || end.all <= s.all {
		return 0, false
	}
	busy := (end.busy - s.busy) / (end.all - s.all) * float64(s.numCPU)
	self := (end.self - s.self).Seconds() / wall
	return max(0, busy-self), true
}

// Warning returns why a section's comparisons must be withheld, or "" when
// other programs used less than LoadedShare of the CPUs since Start (or the
// system cannot tell).
func (p *Probe) Warning() string {
	others, ok := p.Others()
	return LoadWarning(others, ok)
}

// LoadWarning is Warning for a figure measured already: others CPUs used by
// other programs on average, known when ok.
func LoadWarning(others float64, ok bool) string {
	n := runtime.NumCPU()
	if !ok || others < LoadedShare*float64(n) {
		return ""
	}
	return fmt.Sprintf("other programs used %.1f of the %d CPUs on average while it ran (at least %.0f%% withholds comparisons): run again on a quiet machine",
		others, n, 100*LoadedShare)
}

// TitleNote is what a plot's title says of a section whose verdict the load
// withheld, others CPUs being what other programs used: "(verdict withheld:
// other programs used 40% of the CPUs)".
func TitleNote(others float64) string {
	return fmt.Sprintf("(verdict withheld: other programs used %.0f%% of the CPUs)", 100*others/float64(runtime.NumCPU()))
}

// take reads the CPU times now.
func take() sample {
	s := sample{wall: time.Now(), numCPU: runtime.NumCPU()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	// user nice system idle iowait irq softirq steal (guest time is
	// already in user): idle and iowait are the CPU not in use.
	for i, v := range f[1:9] {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return s
		}
		s.all += x
		if i != 3 && i != 4 {
			s.busy += x
		}
	}
	self, ok := ownCPU()
	if !ok {
		return s
	}
	s.self = self
	s.ok = true
	return s
}
