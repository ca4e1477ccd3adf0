// Package fleet is the shared example's core: many instances of a library
// (4096 in the seed: an HTTP client whose parallel requests moved from a
// thread each to shared, reference-counted workers), created at once, each
// running short parallel jobs with a wait before each. A variant chooses how
// an instance runs the parts of a job: on a worker set of its own, on one
// process-wide set that every instance acquires (workers.Acquire), through
// the user-level "on the shared set if free, else serially" rule, on
// goroutines started per job (go + sync.WaitGroup), or serially. Run
// measures wall time, CPU time, context switches, peak goroutines and peak
// RSS, and returns each instance's checksum so that variants can be checked
// against each other.
package fleet

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workgang/workgang/examples/internal/shareset"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/workers"
)

// Variant is how an instance runs a job's parts.
type Variant string

// The variants.
const (
	Own    Variant = "own-set" // workers.New per instance, ForRange caller-runs
	Shared Variant = "shared"  // one workers.Acquire'd set for all, ForRange caller-runs
	Try    Variant = "try"     // the shared set if no other instance is on it, else serial
	GoWG   Variant = "go+wg"   // one goroutine per part per job, sync.WaitGroup
	Serial Variant = "serial"  // the parts one after the other on the instance's goroutine
)

// Variants returns every variant, serial (the reference) first.
func Variants() []Variant { return []Variant{Serial, Own, Shared, Try, GoWG} }

// ParseVariant returns the variant called s.
func ParseVariant(s string) (Variant, error) {
	if v := Variant(s); slices.Contains(Variants(), v) {
		return v, nil
	}
	return "", fmt.Errorf("fleet: unknown variant %q (have %v)", s, Variants())
}

// Config is one measurement.
type Config struct {
	Instances int           // goroutines started at once, one per instance
	Jobs      int           // jobs per instance
	Units     int           // units of work per job (see Burn), split into Parts
	Parts     int           // parts per job; also the size of every worker set
	Wait      time.Duration // sleep before each job
	Variant   Variant
	// Nominal is the work per job Units was calibrated for, for the tables
	// (0: they print the units).
	Nominal time.Duration `json:"nominal_ns"`
}

func (c Config) validate() error {
	switch {
	case c.Instances < 1 || c.Jobs < 1 || c.Units < 1:
		return fmt.Errorf("fleet: instances %d, jobs %d, units %d: each must be at least 1", c.Instances, c.Jobs, c.Units)
	case c.Parts < 1 || c.Parts > tasks.MaxCopies:
		return fmt.Errorf("fleet: parts %d out of range [1, %d]", c.Parts, tasks.MaxCopies)
	case c.Wait < 0:
		return fmt.Errorf("fleet: wait %v must not be negative", c.Wait)
	}
	_, err := ParseVariant(string(c.Variant))
	return err
}

// Result is what Run measured.
type Result struct {
	Config `json:"config"`
	Usage
	// Sums has one checksum per instance: the sum of its jobs' results.
	// Every variant must produce the same sums.
	Sums []uint64 `json:"-"`
}

// Burn does n units of CPU work starting at unit lo of the sequence seeded
// by seed and returns their checksum; splitting [lo, lo+n) into pieces and
// adding their checksums gives the checksum of the whole.
func Burn(seed uint64, lo, n int) uint64 {
	var sum uint64
	for i := lo; i < lo+n; i++ {
		x := seed ^ uint64(i)*0x9e3779b97f4a7c15
		x ^= x >> 31
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 29
		sum += x
	}
	return sum
}

// Calibrate returns the units of Burn that take about d on this machine
// (the fastest of a few timings).
func Calibrate(d time.Duration) int {
	const probe = 200_000
	best := time.Duration(1 << 62)
	for range 5 {
		t0 := time.Now()
		sink.Add(Burn(1, 0, probe))
		best = min(best, time.Since(t0))
	}
	return max(1, int(float64(probe)*float64(d)/float64(best)))
}

var sink atomic.Uint64 // keeps Burn's result alive

// sharedName names the process-wide set the shared variants acquire.
const sharedName = "fleet-shared"

// Run starts cfg.Instances instances at once, waits for all of them, and
// returns the measurement. It leaves no goroutine or set behind.
func Run(cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	res := Result{Config: cfg, Sums: make([]uint64, cfg.Instances)}
	var (
		start = make(chan struct{})
		wg    sync.WaitGroup
		mu    sync.Mutex
		fail  any // the first instance's panic, guarded by mu
		gate  shareset.TryRun
	)
	for i := range cfg.Instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					mu.Lock()
					if fail == nil {
						fail = p
					}
					mu.Unlock()
				}
			}()
			<-start
			res.Sums[i] = instance(cfg, i, &gate) // each instance its own element
		}()
	}
	m := startMeter()
	close(start) // all instances begin at once
	wg.Wait()    // every instance's write to res.Sums happens before Wait returns
	res.Usage = m.stop()
	if fail != nil {
		return res, fmt.Errorf("fleet: an instance panicked: %v", fail)
	}
	return res, nil
}

// instance is one instance's life: set up, run the jobs, tear down.
func instance(cfg Config, id int, gate *shareset.TryRun) uint64 {
	var set *workers.Workers
	switch cfg.Variant {
	case Own:
		w := workers.New("fleet-"+strconv.Itoa(id), cfg.Parts)
		defer w.Close()
		set = w
	case Shared, Try:
		s, release := workers.Acquire(sharedName, cfg.Parts) // reference-counted: the last release closes it
		defer release()
		set = s
	}
	parts := make([]uint64, cfg.Parts)
	var seed uint64 // the job's; set before each run, which orders it before the parts' reads
	per := (cfg.Units + cfg.Parts - 1) / cfg.Parts
	part := func(p int) {
		lo := p * per
		parts[p] = Burn(seed, lo, max(0, min(per, cfg.Units-lo)))
	}
	body := func(_, lo, hi int) {
		for p := lo; p < hi; p++ { // chunks are claimed once: one writer per element
			part(p)
		}
	}
	opts := []workers.RangeOption{workers.WithChunk(1)}
	serial := func() {
		for p := range parts {
			part(p)
		}
	}
	var total uint64
	for j := range cfg.Jobs {
		if cfg.Wait > 0 {
			time.Sleep(cfg.Wait)
		}
		seed = uint64(id)<<32 | uint64(j)
		switch cfg.Variant {
		case Serial:
			serial()
		case Own, Shared:
			set.ForRange(cfg.Parts, body, opts...) // returns after every body; their writes are visible
		case Try:
			gate.Do(func() { set.ForRange(cfg.Parts, body, opts...) }, serial)
		case GoWG:
			var wg sync.WaitGroup
			for p := range parts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					part(p)
				}()
			}
			wg.Wait()
		}
		for _, s := range parts {
			total += s
		}
	}
	return total
}

// Usage is the resources a measurement used.
type Usage struct {
	Wall   time.Duration `json:"wall_ns"`
	User   time.Duration `json:"user_ns"`
	Sys    time.Duration `json:"sys_ns"`
	NVCSw  int64         `json:"nvcsw"`  // voluntary context switches
	NIVCSw int64         `json:"nivcsw"` // involuntary context switches
	// PeakGoroutines is the most goroutines seen by a sampler (every
	// sampleEvery) during the measurement.
	PeakGoroutines int `json:"peak_goroutines"`
	// PeakRSS is the process's peak resident set during the measurement in
	// bytes (Linux's VmHWM, reset at the start after returning the free
	// heap to the OS), or 0 where unknown.
	PeakRSS int64 `json:"peak_rss_bytes"`
}

const sampleEvery = 200 * time.Microsecond

type meter struct {
	t0    time.Time
	r0    rusage
	stopc chan struct{}
	done  chan int
}

func startMeter() *meter {
	debug.FreeOSMemory() // what earlier measurements left in the heap goes back to the OS first
	resetPeakRSS()
	m := &meter{stopc: make(chan struct{}), done: make(chan int)}
	go func() {
		peak := 0
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			peak = max(peak, runtime.NumGoroutine())
			select {
			case <-m.stopc:
				m.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	m.r0 = getRusage()
	m.t0 = time.Now()
	return m
}

func (m *meter) stop() Usage {
	wall := time.Since(m.t0)
	r1 := getRusage()
	close(m.stopc)
	peak := <-m.done
	return Usage{
		Wall: wall, User: r1.user - m.r0.user, Sys: r1.sys - m.r0.sys,
		NVCSw: r1.nvcsw - m.r0.nvcsw, NIVCSw: r1.nivcsw - m.r0.nivcsw,
		PeakGoroutines: peak - 1, // not the sampler itself
		PeakRSS:        peakRSS(),
	}
}
