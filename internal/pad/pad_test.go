package pad_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	"golang.org/x/sys/cpu"

	"github.com/workgang/workgang/internal/pad"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The unit covers an adjacent-line pair of 64-byte lines and never falls
// below the target's own line size; Line is one unit.
func TestCacheLine(t *testing.T) {
	assert.GreaterOrEqual(t, pad.CacheLine, 128, "an aligned pair of 64-byte lines")
	assert.GreaterOrEqual(t, pad.CacheLine, int(unsafe.Sizeof(cpu.CacheLinePad{})), "the target's cache line")
	assert.Zero(t, pad.CacheLine&(pad.CacheLine-1), "CacheLine = %d is not a power of two", pad.CacheLine)
	assert.Equal(t, uintptr(pad.CacheLine), unsafe.Sizeof(pad.Line{}))
}
