// Package batch is an advanced building block, for runtimes whose parallel
// phases are made of many small steps: it combines several subtasks into one
// task, so that such a phase needs one run (one wake-up of the workers)
// instead of one per step: HotSpot's G1BatchedTask.
//
// A Batch holds serial subtasks, each run by exactly one copy (whichever
// claims it first), and parallel subtasks, run by every copy. Each copy first
// tries to claim every serial subtask in the order they were added, running
// those it wins, then runs each parallel subtask in order. There is no barrier
// between subtasks: a copy that finds every serial subtask taken goes straight
// to the parallel ones, so a parallel subtask must not depend on a serial one
// having finished.
//
// Every subtask estimates its cost in workers: how many workers it can keep
// busy long enough to be worth waking (a cheap serial step might cost 0.1, a
// large parallel one the number of chunks it splits into). Workers turns the
// sum into the number of copies to run: ceil(sum), clamped to [1, active].
//
//	b := batch.New("post-mark")
//	b.AddSerial(batch.Func("reset stats", 0.1, resetStats))
//	b.AddParallel(batch.Func("sweep", float64(len(regions))/64, sweep))
//	w.RunN(b, b.Workers(w.ActiveWorkers()))
//	b.Reset() // before the next run
//
// Every copy tries every serial subtask, so a run that returns normally (every
// copy returned) has run each of them exactly once.
//
// The package imports only the standard library and the tasks packages.
package batch

import (
	"fmt"
	"math"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/claim"
)

// Subtask is one step of a batch: a task (Name and Work(worker)) with a cost
// estimate.
type Subtask interface {
	tasks.Task
	// Cost estimates how many workers the subtask can keep busy; it must be
	// finite and not negative. It is called by Workers, before the run.
	Cost() float64
}

// Func returns a Subtask with the given name and fixed cost whose Work calls
// fn. It panics if fn is nil or cost is negative or not finite.
func Func(name string, cost float64, fn func(worker int)) Subtask {
	if fn == nil {
		panic(fmt.Sprintf("batch: Func(%q): nil function", name))
	}
	checkCost("Func", name, cost)
	return &funcSubtask{name: name, cost: cost, fn: fn}
}

type funcSubtask struct {
	name string
	cost float64
	fn   func(worker int)
}

func (s *funcSubtask) Name() string    { return s.name }
func (s *funcSubtask) Work(worker int) { s.fn(worker) }
func (s *funcSubtask) Cost() float64   { return s.cost }

func checkCost(op, name string, c float64) {
	if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		panic(fmt.Sprintf("batch: %s: subtask %q: cost %v, want a finite value >= 0", op, name, c))
	}
}

// Batch is a task made of serial and parallel subtasks; it implements
// tasks.Task. Create one with New and add subtasks before running it. Work
// may run in any number of copies at once; the other methods must not run
// concurrently with a run. A Batch must not be copied after first use.
//
// Memory model: whatever runs the copies (package workers' Run) orders the
// adding of subtasks before every copy and every subtask's writes before the
// run's return; the batch adds no ordering between subtasks.
type Batch struct {
	name     string
	serial   []Subtask
	parallel []Subtask
	claims   claim.Subtasks
}

var _ tasks.Task = (*Batch)(nil)

// New returns an empty batch called name.
func New(name string) *Batch {
	return &Batch{name: name}
}

// Name returns the batch's name.
func (b *Batch) Name() string { return b.name }

// AddSerial adds a subtask that exactly one copy of each run executes. It
// panics if s is nil.
func (b *Batch) AddSerial(s Subtask) {
	if s == nil {
		panic(fmt.Sprintf("batch: %q: AddSerial: nil subtask", b.name))
	}
	b.serial = append(b.serial, s)
	b.claims.Reset(len(b.serial))
}

// AddParallel adds a subtask that every copy of each run executes. It panics
// if s is nil.
func (b *Batch) AddParallel(s Subtask) {
	if s == nil {
		panic(fmt.Sprintf("batch: %q: AddParallel: nil subtask", b.name))
	}
	b.parallel = append(b.parallel, s)
}

// cost returns the sum of the subtasks' costs. It panics if a cost is
// negative or not finite.
func (b *Batch) cost() float64 {
	sum := 0.0
	for _, list := range [][]Subtask{b.serial, b.parallel} {
		for _, s := range list {
			c := s.Cost()
			checkCost("Workers", s.Name(), c)
			sum += c
		}
	}
	return sum
}

// Workers returns the number of copies worth running with at most active
// workers available: the ceiling of the sum of the subtasks' costs, clamped to
// [1, active]. It panics if active < 1 or a cost is negative or not finite.
func (b *Batch) Workers(active int) int {
	if active < 1 {
		panic(fmt.Sprintf("batch: %q: Workers: active = %d, want >= 1", b.name, active))
	}
	c := math.Ceil(b.cost())
	if c >= float64(active) {
		return active
	}
	return max(1, int(c))
}

// Work runs copy worker's share: every serial subtask it claims, then every
// parallel subtask.
func (b *Batch) Work(worker int) {
	for i, s := range b.serial {
		if b.claims.TryClaim(i) {
			s.Work(worker)
		}
	}
	for _, s := range b.parallel {
		s.Work(worker)
	}
}

// Reset makes every serial subtask claimable again, for the next run. It must
// not run concurrently with a run.
func (b *Batch) Reset() { b.claims.Reset(len(b.serial)) }
