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
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		out     string
		errText string
	}{
		{"help", []string{"-h"}, 0, "", "Usage of gc"},
		{"bad flag", []string{"-nope"}, 2, "", "flag provided but not defined"},
		{"bad shape", []string{"-shape", "tree"}, 2, "", `gc: -shape: mark: unknown shape "tree"`},
		{"bad cycles", []string{"-cycles", "0"}, 2, "", "gc: -cycles 0"},
		{"tiny", []string{"-slots", "5000", "-cycles", "3", "-shape", "powerlaw"}, 0, "identical to the serial reference", ""},
		{"quiet", []string{"-slots", "5000", "-cycles", "2", "-q"}, 0, "serial reference", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &errw))
			assert.Contains(t, out.String(), tc.out)
			assert.Contains(t, errw.String(), tc.errText)
			if tc.name == "tiny" {
				assert.Equal(t, 3, strings.Count(out.String(), " Pause "))
				assert.Equal(t, 3, strings.Count(out.String(), "Sweep (ms)"))
			}
			if tc.name == "quiet" {
				assert.NotContains(t, out.String(), "Pause")
			}
		})
	}
}
