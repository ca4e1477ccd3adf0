package openmp

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// epccSource is the C benchmark, built at run time (never committed as a
// binary).
//
//go:embed csrc/epcc.c
var epccSource []byte

// compiler is one way of building epcc.c: a C compiler whose -fopenmp links
// the named OpenMP runtime.
type compiler struct {
	runtime string // "libgomp" or "libomp": the row's name
	cc      string // the compiler command
}

// compilers are the OpenMP runtimes the section compares, in table order.
var compilers = []compiler{
	{runtime: "libgomp", cc: "gcc"},
	{runtime: "libomp", cc: "clang"},
}

// installHint says how to get the compilers on Debian.
const installHint = "Debian: apt-get install gcc clang libomp-dev"

// build compiles epcc.c with c into dir and returns the binary's path. The
// error carries the compiler's output.
func build(ctx context.Context, c compiler, dir string) (string, error) {
	if _, err := exec.LookPath(c.cc); err != nil {
		return "", fmt.Errorf("%s not found (%s)", c.cc, installHint)
	}
	src := filepath.Join(dir, "epcc.c")
	if err := os.WriteFile(src, epccSource, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "epcc-"+c.runtime)
	cmd := exec.CommandContext(ctx, c.cc, "-O2", "-fopenmp", "-o", bin, src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] // the first line says it (a missing omp.h or -lomp)
		}
		return "", fmt.Errorf("%s -fopenmp failed: %v: %s (%s)", c.cc, err, msg, installHint)
	}
	return bin, nil
}

// runNative runs a built epcc in a process of its own and parses its output.
func runNative(ctx context.Context, bin string, p params) (*nativeRun, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		strconv.Itoa(p.threads), strconv.Itoa(p.rounds),
		strconv.FormatFloat(float64(p.target)/1e3, 'f', -1, 64),
		strconv.FormatFloat(p.delayNS, 'f', -1, 64))
	// The team size is also set in the environment, so that nothing the
	// runtime reads before main (a nested or initial team) differs.
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+strconv.Itoa(p.threads))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: no result within %v", filepath.Base(bin), p.timeout)
		}
		return nil, fmt.Errorf("%s: %v: %s", filepath.Base(bin), err, strings.TrimSpace(stderr.String()))
	}
	return parseNative(bytes.NewReader(out))
}

// nativeRun is the parsed output of one epcc process.
type nativeRun struct {
	version    int     // _OPENMP, the specification date the runtime claims
	threads    int     // team size
	rounds     int     // rounds of every figure
	nsPerIter  float64 // the kernel's calibrated cost
	delayIters int     // kernel iterations of the delay
	delayNS    float64 // delayIters * nsPerIter
	// nsPerIters are the calibrations of every process merged (merge).
	nsPerIters []float64
	// overhead holds per construct one figure per round (ns).
	overhead map[string][]float64
	// serial and parallel hold per grain (ns of W) one time per round.
	serial, parallel map[float64][]float64
}

// parseNative parses epcc's output (the lines its header comment lists). It
// checks that every construct and grain has a figure for every round and
// that the output ends with "done", so a truncated or mixed-up output is an
// error rather than a table with holes.
func parseNative(r io.Reader) (*nativeRun, error) {
	n := &nativeRun{overhead: map[string][]float64{}, serial: map[float64][]float64{}, parallel: map[float64][]float64{}}
	sc := bufio.NewScanner(r)
	line, done := 0, false
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if done {
			return nil, fmt.Errorf("epcc output line %d: %q after done", line, text)
		}
		kind, kv, err := splitLine(text)
		if err != nil {
			return nil, fmt.Errorf("epcc output line %d: %v", line, err)
		}
		if err := n.add(kind, kv); err != nil {
			return nil, fmt.Errorf("epcc output line %d: %v", line, err)
		}
		done = kind == "done"
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !done {
		return nil, errors.New("epcc output: no \"done\" line (truncated)")
	}
	return n, n.check()
}

// splitLine splits "kind k=v k=v" into kind and its fields.
func splitLine(text string) (string, map[string]string, error) {
	fields := strings.Fields(text)
	kv := map[string]string{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return "", nil, fmt.Errorf("field %q is not key=value", f)
		}
		if _, dup := kv[k]; dup {
			return "", nil, fmt.Errorf("field %q given twice", k)
		}
		kv[k] = v
	}
	return fields[0], kv, nil
}

// fieldSet reads the fields of one line, remembering the first error.
type fieldSet struct {
	kv  map[string]string
	err error
}

func (f *fieldSet) num(key string) float64 {
	s, ok := f.kv[key]
	if !ok {
		f.fail(fmt.Errorf("missing field %q", key))
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		f.fail(fmt.Errorf("field %s=%q: not a number", key, s))
	}
	return v
}

func (f *fieldSet) int(key string) int {
	v := f.num(key)
	if v != float64(int(v)) {
		f.fail(fmt.Errorf("field %s=%v: not an integer", key, v))
	}
	return int(v)
}

func (f *fieldSet) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// add records one parsed line.
func (n *nativeRun) add(kind string, kv map[string]string) error {
	f := &fieldSet{kv: kv}
	switch kind {
	case "epcc":
		n.version, n.threads, n.rounds = f.int("runtime"), f.int("threads"), f.int("rounds")
		if f.err == nil && (n.threads < 1 || n.rounds < 1) {
			f.fail(fmt.Errorf("threads=%d rounds=%d: want at least 1", n.threads, n.rounds))
		}
	case "calib":
		n.nsPerIter, n.delayIters, n.delayNS = f.num("ns_per_iter"), f.int("delay_iters"), f.num("delay_ns")
		if f.err == nil && (n.nsPerIter <= 0 || n.delayIters < 1) {
			f.fail(fmt.Errorf("ns_per_iter=%v delay_iters=%d: want positive", n.nsPerIter, n.delayIters))
		}
	case "overhead":
		name, ok := kv["construct"]
		if !ok {
			return errors.New("missing field \"construct\"")
		}
		round, ns := f.int("round"), f.num("ns")
		if f.err == nil {
			f.fail(appendRound(n.overhead, name, round, ns))
		}
	case "grain":
		w, round, s, p := f.num("w_ns"), f.int("round"), f.num("serial_ns"), f.num("parallel_ns")
		if f.err == nil && (s <= 0 || p <= 0) {
			f.fail(fmt.Errorf("serial_ns=%v parallel_ns=%v: want positive", s, p))
		}
		if f.err == nil {
			f.fail(appendRound(n.serial, w, round, s))
			f.fail(appendRound(n.parallel, w, round, p))
		}
	case "done":
	default:
		return fmt.Errorf("unknown line kind %q", kind)
	}
	return f.err
}

// appendRound appends v as round number round of m[key]; rounds must come
// in order.
func appendRound[K comparable](m map[K][]float64, key K, round int, v float64) error {
	if round != len(m[key]) {
		return fmt.Errorf("%v: round %d after %d rounds", key, round, len(m[key]))
	}
	m[key] = append(m[key], v)
	return nil
}

// check verifies that the header came and every series is complete.
func (n *nativeRun) check() error {
	if n.threads == 0 || n.nsPerIter == 0 {
		return errors.New("epcc output: no epcc or calib line")
	}
	for _, c := range constructs {
		if got := len(n.overhead[c.name]); got != n.rounds {
			return fmt.Errorf("epcc output: construct %s has %d rounds, want %d", c.name, got, n.rounds)
		}
	}
	for _, w := range grainsNS {
		if got := len(n.serial[w]); got != n.rounds {
			return fmt.Errorf("epcc output: grain %g ns has %d rounds, want %d", w, got, n.rounds)
		}
	}
	return nil
}

// merge appends the rounds of m, a run of the same binary, to n's. A nil n
// has nothing to merge with (the first run is kept as it is). The
// calibration is the median of the processes'.
func (n *nativeRun) merge(m *nativeRun) error {
	if n == nil {
		m.nsPerIters = []float64{m.nsPerIter}
		return nil
	}
	if m.version != n.version || m.threads != n.threads {
		return fmt.Errorf("epcc: runs disagree: _OPENMP %d, %d threads after %d, %d", m.version, m.threads, n.version, n.threads)
	}
	n.rounds += m.rounds
	for k, v := range m.overhead {
		n.overhead[k] = append(n.overhead[k], v...)
	}
	for k, v := range m.serial {
		n.serial[k] = append(n.serial[k], v...)
		n.parallel[k] = append(n.parallel[k], m.parallel[k]...)
	}
	n.nsPerIters = append(n.nsPerIters, m.nsPerIter)
	n.delayIters, n.delayNS = m.delayIters, m.delayNS // the last process's
	n.nsPerIter, _, _ = summary(n.nsPerIters)
	return nil
}

// nativeTimeout bounds one epcc process: far above what its sizes take, so
// that only a hung runtime (or a machine too loaded to measure on) hits it.
func nativeTimeout(p params) time.Duration {
	return 30*time.Second + time.Duration(p.rounds)*(4*time.Second)
}
