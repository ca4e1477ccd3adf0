package alternate

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunAlternates: the sides take turns, each run a process with its own
// arguments, and done sees each process's stdout.
func TestRunAlternates(t *testing.T) {
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo on PATH")
	}
	sides := []Side{{Name: "a", Bin: echo}, {Name: "b", Bin: echo}}
	var got []string
	err = Run("test", sides, 2, func(s Side, run int) []string { return []string{s.Name, fmt.Sprint(run)} },
		func(s Side, run int, out []byte) error {
			got = append(got, strings.TrimSpace(string(out)))
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []string{"a 0", "b 0", "a 1", "b 1"}, got)
}

// TestRunStops: the first failing process stops the runs and names its side.
func TestRunStops(t *testing.T) {
	sides := []Side{{Name: "a", Bin: "/nonexistent/binary"}, {Name: "b", Bin: "/nonexistent/binary"}}
	calls := 0
	err := Run("test", sides, 3, func(Side, int) []string { return nil }, func(Side, int, []byte) error { calls++; return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a, run 1")
	assert.Equal(t, 0, calls)
}

// TestMissing picks the lines that name what the library lacks, and nothing
// from an error that is not a build's.
func TestMissing(t *testing.T) {
	out := `# github.com/x/perf/internal/harness
perf/internal/harness/flags.go:107:34: undefined: tasks.MaxCopies
perf/x.go:9:9: p.Set.Do undefined (type *workers.Workers has no field or method Do)
perf/y.go:15:2: no required module provides package github.com/x/internal/pad; to add it:
	cd /tmp/perf
perf/z.go:1:1: syntax error: unexpected }
`
	err := fmt.Errorf("wrapped: %w", &BuildError{Dir: "/tmp", Err: errors.New("exit status 1"), Output: out})
	assert.Equal(t, []string{
		"perf/internal/harness/flags.go:107:34: undefined: tasks.MaxCopies",
		"perf/x.go:9:9: p.Set.Do undefined (type *workers.Workers has no field or method Do)",
		"perf/y.go:15:2: no required module provides package github.com/x/internal/pad",
	}, Missing(err))
	assert.Nil(t, Missing(errors.New("exit status 1")))
	assert.Contains(t, err.Error(), "syntax error")
}
