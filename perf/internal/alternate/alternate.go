// Package alternate is the process machinery of the maintainers' tools that
// compare two builds of a measuring program (perf/gate: two Go releases;
// perf/compare: two releases of the library): build each binary, then run
// them in turn, A B A B ..., each run a process of its own, so that a drift
// of the machine's load hits both sides alike.
package alternate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Build runs `go build -o bin pkg` in dir with env added to the process's
// environment. A failed build's error carries the compiler's output.
func Build(dir, pkg, bin string, env ...string) error {
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return &BuildError{Dir: dir, Err: err, Output: out.String()}
	}
	return nil
}

// BuildError is a failed build: the compiler's output and the error of the
// go command.
type BuildError struct {
	Dir    string
	Err    error
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("go build in %s: %v\n%s", e.Dir, e.Err, strings.TrimRight(e.Output, "\n"))
}

func (e *BuildError) Unwrap() error { return e.Err }

// Missing returns the go command's lines that name a package or symbol the
// build's packages use but do not find (packages no module provides,
// undefined names, missing fields and methods): what a newer program needs
// from an older library.
func Missing(err error) []string {
	var be *BuildError
	if !errors.As(err, &be) {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(be.Output, "\n") {
		if strings.Contains(l, "undefined: ") || strings.Contains(l, "has no field or method") || strings.Contains(l, "no required module provides package") {
			lines = append(lines, strings.TrimSuffix(strings.TrimSpace(l), "; to add it:"))
		}
	}
	return lines
}

// A Side is one of the binaries compared.
type Side struct {
	Name string   // what progress lines call it
	Bin  string   // the binary
	Env  []string // added to the environment of its processes
}

// Run runs every side's binary runs times, in turn (sides[0], sides[1], ...,
// then again), each run a process of its own with the arguments args
// returns for it. Each process's stdout goes to done; its stderr to this
// process's stderr, after a progress line prefixed with tag. The first
// failure stops the runs.
func Run(tag string, sides []Side, runs int, args func(s Side, run int) []string, done func(s Side, run int, stdout []byte) error) error {
	for r := range runs {
		for _, s := range sides {
			fmt.Fprintf(os.Stderr, "%s: run %d/%d, %s\n", tag, r+1, runs, s.Name)
			var out bytes.Buffer
			cmd := exec.Command(s.Bin, args(s, r)...)
			cmd.Stdout, cmd.Stderr = &out, os.Stderr
			cmd.Env = append(os.Environ(), s.Env...)
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s, run %d: %w", s.Name, r+1, err)
			}
			if err := done(s, r, out.Bytes()); err != nil {
				return fmt.Errorf("%s, run %d: %w", s.Name, r+1, err)
			}
		}
	}
	return nil
}
