package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	small := []string{"-difficulty", "5", "-calls", "20", "-first", "2", "-gap", "0s", "-onehash", "200"}
	traceFile := filepath.Join(t.TempDir(), "trace.out")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		out     string // in stdout
		errText string // in stderr
	}{
		{"help", []string{"-h"}, 0, "", "Usage of pow"},
		{"bad flag", []string{"-nope"}, 2, "", "flag provided but not defined"},
		{"bad difficulty", []string{"-difficulty", "41"}, 2, "", "pow: -difficulty 41 out of range [0, 40]"},
		{"bad calls", []string{"-calls", "0"}, 2, "", "pow: -calls 0"},
		{"small", small, 0, "RunN+flag", ""},
		{"no one-hash", append([]string{"-onehash", "0"}, small[:8]...), 0, "workers.New+Close", ""},
		{"trace", append([]string{"-trace", traceFile}, small...), 0, "one-hash search", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &errw), errw.String())
			assert.Contains(t, out.String(), tc.out)
			assert.Contains(t, errw.String(), tc.errText)
			if tc.name == "small" {
				assert.Equal(t, 1+7+1+2+10, strings.Count(out.String(), "\n"), out.String())
			}
			if tc.name == "no one-hash" {
				assert.NotContains(t, out.String(), "one-hash")
			}
		})
	}
	st, err := os.Stat(traceFile)
	if assert.NoError(t, err) {
		assert.Positive(t, st.Size())
	}
}
