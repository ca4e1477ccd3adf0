package cli_test

import (
	"bytes"
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/examples/internal/cli"
	"github.com/workgang/workgang/tasks"
	"github.com/workgang/workgang/tasks/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		ran      bool
		errText  string
		wantSize int // the -size flag as body saw it
	}{
		{"defaults", nil, cli.OK, true, "", 1},
		{"flag", []string{"-size", "3"}, cli.OK, true, "", 3},
		{"help", []string{"-h"}, cli.OK, false, "Usage of demo", 0},
		{"bad flag", []string{"-nope"}, cli.Usage, false, "flag provided but not defined", 0},
		{"stray arguments", []string{"x", "y"}, cli.Usage, false, `demo: unexpected arguments ["x" "y"]`, 0},
		{"check fails", []string{"-size", "0"}, cli.Usage, false, "demo: -size 0, want >= 1", 0},
		{"body fails", []string{"-size", "13"}, cli.Failed, true, "demo: unlucky", 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errw bytes.Buffer
			ran, size := false, 0
			code := cli.Run("demo", tc.args, &errw, func(fs *flag.FlagSet) func() error {
				p := fs.Int("size", 1, "a size")
				return func() error {
					if *p < 1 {
						return errors.New("demo: -size 0, want >= 1")
					}
					size = *p
					return nil
				}
			}, func() error {
				ran = true
				if size == 13 {
					return errors.New("demo: unlucky")
				}
				return nil
			})
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.ran, ran, "body ran")
			assert.Contains(t, errw.String(), tc.errText)
			if tc.ran {
				assert.Equal(t, tc.wantSize, size)
			}
		})
	}
}

func TestWorkersFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
		err  string
	}{
		{nil, policy.Default(), ""},
		{[]string{"-workers", "3"}, 3, ""},
		{[]string{"-workers", "-1"}, 0, "demo: -workers -1 out of range [0, "},
		{[]string{"-workers", "1000000"}, 0, "demo: -workers 1000000 out of range"},
	} {
		fs := flag.NewFlagSet("demo", flag.ContinueOnError)
		resolve := cli.WorkersFlag(fs, "workers")
		assert.NoError(t, fs.Parse(tc.args))
		n, err := resolve()
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%v", tc.args)
			continue
		}
		assert.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, n, "%v", tc.args)
		assert.LessOrEqual(t, n, tasks.MaxCopies)
	}
}
