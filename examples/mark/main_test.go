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
		out     string // in stdout
		errText string // in stderr
	}{
		{"help", []string{"-h"}, 0, "", "Usage of mark"},
		{"bad flag", []string{"-nope"}, 2, "", "flag provided but not defined"},
		{"bad shape", []string{"-shape", "tree"}, 2, "", `mark: unknown shape "tree"`},
		{"bad objects", []string{"-objects", "1"}, 2, "", "mark: -objects 1 out of range"},
		{"tiny", []string{"-objects", "3000", "-runs", "1", "-v"}, 0, "lists", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &errw))
			assert.Contains(t, out.String(), tc.out)
			assert.Contains(t, errw.String(), tc.errText)
			assert.NotContains(t, errw.String(), "mark: mark:", "doubled prefix")
			assert.NotContains(t, out.String()+errw.String(), "\033", "escape codes into a non-terminal")
			if tc.code == 0 && tc.out != "" {
				assert.Equal(t, 1+1+3+3*5, strings.Count(out.String(), "\n"), "title, header, 3 rows, 5 log lines per shape")
			}
		})
	}
}
