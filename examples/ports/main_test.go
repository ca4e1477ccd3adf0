package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/examples/ports/bench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		lines   int    // of stdout, if not 0
		errText string // in stderr
	}{
		{"help", []string{"-h"}, 0, 0, "Usage of ports"},
		{"bad flag", []string{"-nope"}, 2, 0, "flag provided but not defined"},
		{"bad sides", []string{"-sides", "64,x"}, 2, 0, `"x" is not a positive integer`},
		{"bad rounds", []string{"-rounds", "0"}, 2, 0, "ports: -rounds 0"},
		{"small", []string{"-sides", "16,40", "-callers", "2", "-rounds", "2", "-batch", "1ms"}, 0, 1 + 1 + 2*len(bench.Pairs) + 1, ""}, // title, head, rows, the * note,
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &errw), errw.String())
			assert.Contains(t, errw.String(), tc.errText)
			if tc.lines > 0 {
				assert.Equal(t, tc.lines, strings.Count(out.String(), "\n"), out.String())
				assert.Contains(t, out.String(), "40x40")
			}
		})
	}
}
