// Package phases is an advanced building block, for runtimes that log what
// each worker did in their parallel phases: it records per-worker values of
// the named phases of a parallel task, such as the time each worker spent
// scanning roots or the number of objects it marked, and summarizes them
// across workers, the way HotSpot's WorkerDataArray feeds its GC phase logs:
//
//	Mark (ms): Min: 10.0, Avg: 11.5, Max: 13.0, Diff: 3.0, Sum: 23.0, Workers: 2
//
// A Phase holds one slot per worker id. Worker w writes only slot w, with Set
// (once per run) or Add (any number of times), from inside its copy of the
// task; the coordinator reads the summary after the run, which the run's
// synchronization orders after every write. Recording is allocation-free.
//
// Arithmetic saturates instead of wrapping: Add, Summary's Sum and Diff stop
// at the largest (or smallest) int64 value, and Avg is then the
// floating-point mean of the values, so MaxInt64 and 1 sum to MaxInt64 and
// average about 4.6e18, never to a negative number.
//
// The package imports only the standard library.
package phases

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Value is the type of a phase's values: time.Duration for times (printed in
// milliseconds), any other type of underlying type int64 for counts.
type Value interface{ ~int64 }

// Phase holds one value per worker for a named phase. Create one with New.
// Distinct workers may record concurrently; one worker's slot must be written
// by one goroutine at a time. Summary, String and Reset must not run
// concurrently with recording.
type Phase[V Value] struct {
	name  string
	slots []slot[V]
}

// slot is one worker's value, padded to a cache line so that workers
// recording at the same time do not write the same line.
type slot[V Value] struct {
	v   V
	set bool
	_   [cacheLine - 16]byte
}

const cacheLine = 64

// New returns a phase called name with a slot for each of workers workers, all
// unset. It panics if workers < 1.
func New[V Value](name string, workers int) *Phase[V] {
	if workers < 1 {
		panic(fmt.Sprintf("phases: New(%q): workers = %d, want >= 1", name, workers))
	}
	return &Phase[V]{name: name, slots: make([]slot[V], workers)}
}

// Name returns the phase's name.
func (p *Phase[V]) Name() string { return p.name }

// Workers returns the number of slots.
func (p *Phase[V]) Workers() int { return len(p.slots) }

// Set records v as worker's value. It panics if worker already has a value
// in this run (use Add to accumulate) or is out of range.
func (p *Phase[V]) Set(worker int, v V) {
	s := &p.slots[worker]
	if s.set {
		p.panicSet(worker)
	}
	s.v, s.set = v, true
}

func (p *Phase[V]) panicSet(worker int) {
	panic(fmt.Sprintf("phases: %q: Set: worker %d already has a value", p.name, worker))
}

// Add adds v to worker's value (an unset value counts as 0) and marks it set.
// The sum saturates at the int64 limits instead of wrapping.
func (p *Phase[V]) Add(worker int, v V) {
	s := &p.slots[worker]
	s.v = satAdd(s.v, v)
	s.set = true
}

// satAdd returns a + b, or the int64 limit on b's side if that overflows.
func satAdd[V Value](a, b V) V {
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

// Get returns worker's value and whether it was set.
func (p *Phase[V]) Get(worker int) (V, bool) {
	s := &p.slots[worker]
	return s.v, s.set
}

// Reset unsets every slot.
func (p *Phase[V]) Reset() { clear(p.slots) }

// Summary returns the minimum, average, maximum, spread and sum of the values
// of the workers that reported. With no worker reporting, all are zero. Sum
// and Diff saturate at the int64 limits; Avg is the mean to float64 precision
// either way.
func (p *Phase[V]) Summary() Summary[V] {
	s := Summary[V]{Name: p.name}
	var fsum float64 // the sum without saturation, for Avg
	saturated := false
	for i := range p.slots {
		sl := &p.slots[i]
		if !sl.set {
			continue
		}
		if s.Workers == 0 || sl.v < s.Min {
			s.Min = sl.v
		}
		if s.Workers == 0 || sl.v > s.Max {
			s.Max = sl.v
		}
		sum := satAdd(s.Sum, sl.v)
		saturated = saturated || sum != s.Sum+sl.v
		s.Sum = sum
		fsum += float64(sl.v)
		s.Workers++
	}
	if s.Workers > 0 {
		// float64(Sum) is the exact sum rounded once unless Sum
		// saturated; then the float sum stands in for the true one.
		if saturated {
			s.Avg = fsum / float64(s.Workers)
		} else {
			s.Avg = float64(s.Sum) / float64(s.Workers)
		}
		s.Diff = diff(s.Max, s.Min)
	}
	return s
}

// diff returns hi - lo (hi >= lo), saturated at MaxInt64.
func diff[V Value](hi, lo V) V {
	d := hi - lo
	if d < 0 { // a true difference is >= 0; a negative one wrapped
		return math.MaxInt64
	}
	return d
}

// String returns the phase's summary as one log line; see Summary.String.
func (p *Phase[V]) String() string { return p.Summary().String() }

// Summary is a phase's values summarized across the workers that reported.
type Summary[V Value] struct {
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

// Times is a phase of durations, printed in milliseconds.
type Times = Phase[time.Duration]

// Counts is a phase of counts (work items, bytes, steals).
type Counts = Phase[int64]

// NewTimes returns New[time.Duration](name, workers).
func NewTimes(name string, workers int) *Times { return New[time.Duration](name, workers) }

// NewCounts returns New[int64](name, workers).
func NewCounts(name string, workers int) *Counts { return New[int64](name, workers) }
