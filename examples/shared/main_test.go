package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	small := []string{"-instances", "64", "-jobs", "2", "-work", "2us,5us", "-runs", "1"}
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		out     string // in stdout
		errText string // in stderr
		rows    int    // table rows, if the run succeeds
	}{
		{"help", []string{"-h"}, 0, "", "Usage of shared", 0},
		{"bad flag", []string{"-nope"}, 2, "", "flag provided but not defined", 0},
		{"bad work", []string{"-work", "0s"}, 2, "", `shared: -work "0s": want a comma list of positive durations`, 0},
		{"bad variant", []string{"-variants", "own-set,x"}, 2, "", `fleet: unknown variant "x"`, 0},
		{"bad instances", []string{"-instances", "0"}, 2, "", "shared: -instances 0", 0},
		{"small", small, 0, "own-set", "", 2 * 5},
		{"two variants", append([]string{"-variants", "shared"}, small...), 0, "shared", "", 2 * 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &errw), errw.String())
			assert.Contains(t, out.String(), tc.out)
			assert.Contains(t, errw.String(), tc.errText)
			if tc.rows > 0 {
				assert.Equal(t, 2+tc.rows, strings.Count(out.String(), "\n"), "title, header, rows:\n%s", out.String())
				assert.Contains(t, out.String(), "checksums checked against serial")
			}
		})
	}
}
