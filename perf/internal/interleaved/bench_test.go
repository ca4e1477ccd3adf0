package interleaved

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/workgang/workgang/perf/internal/measure"
	"github.com/workgang/workgang/perf/internal/runners"
	"github.com/workgang/workgang/perf/internal/work"
)

// The benchmarks are the section's ops the plain way, as a project's own
// benchmarks time them: b.N runs back to back on ONE long-lived set created
// once per benchmark process (benchFixture), nothing else in between. They
// give the "plain benchmark" figures the section's alone driver stands for:
//
//	go test -run '^$' -bench . ./perf/internal/interleaved
//
// Names carry the op and the implementation: BenchmarkEmpty/n=2/workgang+caller,
// BenchmarkGrain/W=5us/n=2/go+WaitGroup, BenchmarkPause/chanpool. Beside
// workgang's two modes (workgang: a plain task; workgang+caller: opted in
// to caller-runs) run the peers go+WaitGroup and chanpool, and serial for
// the grain and the pause.

// benchImpls are the implementations the benchmarks run.
var benchImpls = []string{runners.NameWorkgang, runners.NameWaitGroup, runners.NameChanPool, runners.NameSerial}

// fixture is the benchmarks' shared state: the ops, sized for GOMAXPROCS,
// and the implementations, started once.
type fixture struct {
	ops []*op
	st  *started
}

var (
	fixtureMu sync.Mutex
	shared    *fixture
)

// benchFixture returns the shared fixture, creating it on first use.
func benchFixture() *fixture {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if shared == nil {
		size := runtime.GOMAXPROCS(0)
		shared = &fixture{ops: buildOps(size, work.Calibrate()), st: startAll(size, benchImpls...)}
	}
	return shared
}

// stopBenchFixture stops the shared fixture's implementations, if a
// benchmark created it (TestMain calls it before the leak check).
func stopBenchFixture() error {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if shared == nil {
		return nil
	}
	err := shared.st.stop()
	shared = nil
	return err
}

// forkJoinOf returns the fixture's started implementation called name.
func (f *fixture) forkJoinOf(name string) forkJoin {
	for i, im := range impls {
		if im.name == name {
			return f.st.fj[i]
		}
	}
	panic(fmt.Sprintf("interleaved: no implementation %q", name))
}

// benchOp times b.N runs of o on fj after measure.WarmRuns untimed ones.
// An op with a gap (the pause) runs it before every run, inside b.N's time,
// and also reports the runs alone as pause-ns/op (one clock read each).
func benchOp(b *testing.B, o *op, fj forkJoin) {
	o.batch(fj, measure.WarmRuns)
	b.ReportAllocs()
	if o.gap == nil {
		for b.Loop() {
			o.run(fj)
		}
		return
	}
	var timed time.Duration
	for b.Loop() {
		o.gap.Work(0)
		t0 := time.Now()
		o.run(fj)
		timed += time.Since(t0)
	}
	b.ReportMetric(float64(timed)/float64(b.N), "pause-ns/op")
}

// benchKind runs, per op of kind, a sub-benchmark named name(op) plus the
// implementation: workgang in the op's mode and, for a plain op,
// workgang+caller on its caller-runs twin; then the peers and (where the op
// has it) serial, once per plain op: they run both modes alike.
func benchKind(b *testing.B, kind string, name func(o *op) string) {
	f := benchFixture()
	for _, o := range f.ops {
		if o.Kind != kind || o.Mode == ModeCaller {
			continue
		}
		b.Run(name(o)+runners.NameWorkgang, func(b *testing.B) { benchOp(b, o, f.forkJoinOf(runners.NameWorkgang)) })
		if twin := f.callerTwin(o); twin != nil {
			b.Run(name(o)+runners.NameCaller, func(b *testing.B) { benchOp(b, twin, f.forkJoinOf(runners.NameWorkgang)) })
		}
		for _, impl := range benchImpls[1:] {
			if impl == runners.NameSerial && !o.serial {
				continue
			}
			b.Run(name(o)+impl, func(b *testing.B) { benchOp(b, o, f.forkJoinOf(impl)) })
		}
	}
}

// callerTwin returns the caller-runs op of the same kind, n and work as
// the plain op o, or nil.
func (f *fixture) callerTwin(o *op) *op {
	for _, x := range f.ops {
		if x.Kind == o.Kind && x.N == o.N && x.WorkNS == o.WorkNS && x.Mode == ModeCaller {
			return x
		}
	}
	return nil
}

// BenchmarkEmpty is the empty op: a fork-join of n copies of an empty task,
// at n = 1 and n = GOMAXPROCS.
func BenchmarkEmpty(b *testing.B) {
	benchKind(b, KindEmpty, func(o *op) string { return fmt.Sprintf("n=%d/", o.N) })
}

// BenchmarkGrain is the grain sweep: n = GOMAXPROCS copies of W of work
// each, W = 1 to 20 us; serial is the baseline.
func BenchmarkGrain(b *testing.B) {
	benchKind(b, KindGrain, func(o *op) string { return fmt.Sprintf("W=%s/n=%d/", measure.FmtNS(o.WorkNS), o.N) })
}

// BenchmarkPause is the pause script, each phase in its mode, 100 us of
// serial work on the caller before each pause (in ns/op; pause-ns/op
// without it).
func BenchmarkPause(b *testing.B) {
	benchKind(b, KindPause, func(*op) string { return "" })
}
