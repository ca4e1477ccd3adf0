// Package phases is an advanced building block, for runtimes that log what
// each worker did in their parallel phases: it records per-worker values of
// the named phases of a parallel task, such as the time each worker spent
// scanning roots or the number of objects it marked, and summarizes them
// across workers, the way HotSpot's WorkerDataArray feeds its GC phase logs:
//
//	Mark (ms): Min: 10.0, Avg: 11.5, Max: 13.0, Diff: 3.0, Sum: 23.0, Workers: 2
//
// A Phase holds one slot per worker id: a Phase[time.Duration] for times,
// printed in milliseconds, or a Phase[int64] for counts (work items, bytes,
// steals). Worker w writes only slot w, with Set (once per run) or Add (any
// number of times), from inside its copy of the task; the coordinator reads
// the Summary after the run, which the run's synchronization orders after
// every write. Recording is allocation-free.
//
// Arithmetic saturates instead of wrapping: Add, Summary's Sum and Diff stop
// at the largest (or smallest) int64 value, and Avg is then the
// floating-point mean of the values, so MaxInt64 and 1 sum to MaxInt64 and
// average about 4.6e18, never to a negative number.
//
// The package imports only the standard library and internal/pad.
package phases

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/workgang/workgang/internal/pad"
)

// value is the type of a phase's values: time.Duration for times (printed in
// milliseconds), any other type of underlying type int64 for counts.
type value interface{ ~int64 }

// Phase holds one value per worker for a named phase. Create one with New;
// V is time.Duration for times, or any type of underlying type int64 for
// counts.
// Distinct workers may record concurrently; one worker's slot must be written
// by one goroutine at a time. Summary and Reset must not run
// concurrently with recording.
type Phase[V value] struct {
	name  string
	slots []slot
}

// slot is one worker's value (as an int64, V's underlying type), padded to
// the module's padding unit (pad.CacheLine: an adjacent-line pair on x86) so
// that workers recording at the same time write neither one line nor one
// pair of lines. BenchmarkAddParallel records into neighbouring slots from
// every processor.
type slot struct {
	slotValue
	_ [uintptr(pad.CacheLine) - unsafe.Sizeof(slotValue{})]byte
}

type slotValue struct {
	v   int64
	set bool
}

// New returns a phase called name with a slot for each of workers workers, all
// unset. It panics if workers < 1.
func New[V value](name string, workers int) *Phase[V] {
	if workers < 1 {
		panic(fmt.Sprintf("phases: New(%q): workers = %d, want >= 1", name, workers))
	}
	return &Phase[V]{name: name, slots: make([]slot, workers)}
}

// Set records v as worker's value. It panics if worker already has a value
// in this run (use Add to accumulate) or is out of range.
func (p *Phase[V]) Set(worker int, v V) {
	s := &p.slots[worker]
	if s.set {
		p.panicSet(worker)
	}
	s.v, s.set = int64(v), true
}

func (p *Phase[V]) panicSet(worker int) {
	panic(fmt.Sprintf("phases: %q: Set: worker %d already has a value", p.name, worker))
}

// Add adds v to worker's value (an unset value counts as 0) and marks it set.
// The sum saturates at the int64 limits instead of wrapping.
func (p *Phase[V]) Add(worker int, v V) {
	s := &p.slots[worker]
	s.v = satAdd(s.v, int64(v))
	s.set = true
}

// satAdd returns a + b, or the int64 limit on b's side if that overflows.
func satAdd(a, b int64) int64 {
	sum := a + b
	// Without overflow, sum > a exactly when b > 0; a wrapped sum lands on
	// the other side of a.
	if (sum > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return sum
}

// Reset unsets every slot.
func (p *Phase[V]) Reset() { clear(p.slots) }

// Summary returns the minimum, average, maximum, spread and sum of the values
// of the workers that reported. With no worker reporting, all are zero. Sum
// and Diff saturate at the int64 limits; Avg is the mean to float64 precision
// either way.
func (p *Phase[V]) Summary() Summary[V] {
	var lo, hi, sum int64
	var fsum float64 // the sum without saturation, for Avg
	saturated := false
	workers := 0
	for i := range p.slots {
		sl := &p.slots[i]
		if !sl.set {
			continue
		}
		if workers == 0 || sl.v < lo {
			lo = sl.v
		}
		if workers == 0 || sl.v > hi {
			hi = sl.v
		}
		next := satAdd(sum, sl.v)
		saturated = saturated || next != sum+sl.v
		sum = next
		fsum += float64(sl.v)
		workers++
	}
	s := Summary[V]{Name: p.name, Min: V(lo), Max: V(hi), Sum: V(sum), Workers: workers}
	if workers > 0 {
		// float64(sum) is the exact sum rounded once unless sum
		// saturated; then the float sum stands in for the true one.
		if saturated {
			s.Avg = fsum / float64(workers)
		} else {
			s.Avg = float64(sum) / float64(workers)
		}
		s.Diff = V(diff(hi, lo))
	}
	return s
}

// diff returns hi - lo (hi >= lo), saturated at MaxInt64.
func diff(hi, lo int64) int64 {
	d := hi - lo
	if d < 0 { // a true difference is >= 0; a negative one wrapped
		return math.MaxInt64
	}
	return d
}

// Summary is a phase's values summarized across the workers that reported.
type Summary[V value] struct {
	Name    string  `json:"name"`
	Min     V       `json:"min"`
	Avg     float64 `json:"avg"` // in units of V
	Max     V       `json:"max"`
	Diff    V       `json:"diff"`    // Max - Min, saturated at MaxInt64
	Sum     V       `json:"sum"`     // saturated at the int64 limits
	Workers int     `json:"workers"` // how many workers reported
}

// String formats the summary as one log line. Durations are printed in
// milliseconds with three decimals, counts as integers (the average with one
// decimal):
//
//	Mark (ms): Min: 10.000, Avg: 11.500, Max: 13.000, Diff: 3.000, Sum: 23.000, Workers: 2
//	Marked: Min: 10, Avg: 11.5, Max: 13, Diff: 3, Sum: 23, Workers: 2
//
// With no worker reporting, it prints the name and "skipped".
func (s Summary[V]) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	_, isTime := any(s.Min).(time.Duration)
	if isTime {
		b.WriteString(" (ms)")
	}
	b.WriteString(":")
	if s.Workers == 0 {
		b.WriteString(" skipped")
		return b.String()
	}
	num := func(label string, v float64) {
		b.WriteString(" ")
		b.WriteString(label)
		b.WriteString(": ")
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	}
	if isTime {
		ms := float64(time.Millisecond)
		num = func(label string, v float64) {
			b.WriteString(" ")
			b.WriteString(label)
			b.WriteString(": ")
			b.WriteString(strconv.FormatFloat(v/ms, 'f', 3, 64))
		}
	}
	avg := s.Avg
	if !isTime {
		avg = math.Round(avg*10) / 10
	}
	num("Min", float64(s.Min))
	b.WriteString(",")
	num("Avg", avg)
	b.WriteString(",")
	num("Max", float64(s.Max))
	b.WriteString(",")
	num("Diff", float64(s.Diff))
	b.WriteString(",")
	num("Sum", float64(s.Sum))
	b.WriteString(", Workers: ")
	b.WriteString(strconv.Itoa(s.Workers))
	return b.String()
}
