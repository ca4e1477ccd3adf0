package harness

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIsTerminal checks that files and pipes are not terminals, so their
// progress lines are not rewritten with \r.
func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "progress")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, isTerminal(w), "a pipe")
	assert.False(t, isTerminal(&bytes.Buffer{}), "not a file")
	if runtime.GOOS == "linux" {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		require.NoError(t, err)
		defer null.Close()
		assert.False(t, isTerminal(null), "/dev/null is a character device, not a terminal")
	}
}

// TestProgress checks the progress line's delay, throttling and clearing.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	p.update("too early")
	assert.Empty(t, b.String(), "silent during the first seconds")
	p.delay = 0
	p.update("step %d", 1)
	assert.Contains(t, b.String(), "step 1")
	p.update("step %d", 2)
	assert.NotContains(t, b.String(), "step 2", "throttled")

	b.Reset()
	p = &progress{w: &b, tty: true, start: time.Now()}
	p.update("on a terminal")
	p.clear()
	assert.True(t, strings.HasPrefix(b.String(), "\r"), "rewrites its line")
	assert.True(t, strings.HasSuffix(b.String(), "\r"), "clears its line")
}
