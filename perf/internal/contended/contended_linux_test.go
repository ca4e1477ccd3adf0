package contended

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCgroupLookup checks the parsing that finds where a quota cgroup can
// go: the cgroup2 and v1 cpu mounts in mountinfo (a hybrid layout, where
// cpuacct and cpuset must not pass for cpu) and the own cgroup's paths.
func TestCgroupLookup(t *testing.T) {
	mountinfo := []byte(`25 30 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
26 25 0:23 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
27 25 0:24 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu
28 25 0:25 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`)
	assert.Equal(t, "/sys/fs/cgroup/unified", mountOf(mountinfo, isV2Mount))
	assert.Equal(t, "/sys/fs/cgroup/cpu", mountOf(mountinfo, isCPUV1Mount))
	assert.Equal(t, "", mountOf([]byte("26 25 0:23 / /x rw - cgroup cgroup rw,cpuset\nbad line\n"), isCPUV1Mount))

	own := []byte("4:memory:/a/b\n3:cpuset:/c\n1:cpu,cpuacct:/user.slice\n0::/user.slice/session-1.scope\n")
	p, ok := cgroupPath(own, isV2Entry)
	assert.Equal(t, []any{"/user.slice/session-1.scope", true}, []any{p, ok}, "v2 entry")
	p, ok = cgroupPath(own, isCPUV1Entry)
	assert.Equal(t, []any{"/user.slice", true}, []any{p, ok}, "v1 cpu entry")
	_, ok = cgroupPath([]byte("4:memory:/a\n3:cpuset:/\n"), isCPUV1Entry)
	assert.False(t, ok, "no cpu entry")
	assert.True(t, hasWord("cpu io memory\n", "cpu"))
	assert.False(t, hasWord("cpuset io", "cpu"))
}
