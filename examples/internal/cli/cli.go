// Package cli is the command-line skeleton of the example commands
// (examples/gc and examples/mark): flag parsing into a FlagSet that reports
// to stderr, the exit codes, the checks every command makes (no stray
// arguments, a -workers flag in range) and the worker-count default.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/policy"
)

// Exit codes of Run.
const (
	OK     = 0 // the command succeeded, or -h printed the usage
	Failed = 1 // the command ran and failed
	Usage  = 2 // bad flags or arguments; nothing ran
)

// Run is a command's main: it parses args with a FlagSet called name, on
// which define has defined the command's flags, then calls check (the
// command's own validation of the parsed values, nil for none) and body. It
// prints every error to stderr and returns the exit code: OK (also for -h),
// Usage if parsing or check failed (body did not run), Failed if body
// returned an error. Errors from check and body are printed as they are, so
// they carry the command's name themselves ("gc: -cycles 0, want >= 1").
func Run(name string, args []string, stderr io.Writer, define func(fs *flag.FlagSet) (check func() error), body func() error) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := define(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return OK
		}
		return Usage // the flag package has printed the problem and the usage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", name, fs.Args())
		return Usage
	}
	if check != nil {
		if err := check(); err != nil {
			fmt.Fprintln(stderr, err)
			return Usage
		}
	}
	if err := body(); err != nil {
		fmt.Fprintln(stderr, err)
		return Failed
	}
	return OK
}

// WorkersFlag defines the -workers flag on fs, with usage as its help text,
// and returns a function that checks it and returns the worker count: the
// flag's value, or for 0 (the default) the default policy's worker count for
// this machine. The error names the command ("mark: -workers 70000 out of
// range [0, 65536]").
func WorkersFlag(fs *flag.FlagSet, usage string) (resolve func() (int, error)) {
	n := fs.Int("workers", 0, usage)
	return func() (int, error) {
		switch {
		case *n < 0 || *n > tasks.MaxCopies:
			return 0, fmt.Errorf("%s: -workers %d out of range [0, %d]", fs.Name(), *n, tasks.MaxCopies)
		case *n == 0:
			return policy.Default(), nil
		}
		return *n, nil
	}
}
