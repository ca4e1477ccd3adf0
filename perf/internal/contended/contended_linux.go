//go:build linux

package contended

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The contended section's process control on Linux: burner and child
// processes in process groups of their own (killed as groups), the child
// confined to one CPU by the affinity it is started with, and a cgroup with
// a CPU quota for it to join.

// burnerRamp is how long the burners run before the child starts, so that
// the child meets them already on the CPUs.
const burnerRamp = 200 * time.Millisecond

// contendedRun is how one condition went: measured (Child) or skipped (with
// the reason), and what was set up for it.
type contendedRun struct {
	Child   *contendedChild
	Setup   string
	Skipped string
}

// runCondition sets up condition c (burners, a cgroup), runs a child that
// measures spec within timeout, and tears everything down again, also when
// ctx is cancelled or anything fails.
func runCondition(ctx context.Context, c contendedCond, spec contendedSpec, timeout time.Duration) (contendedRun, error) {
	var run contendedRun
	exe, err := os.Executable()
	if err != nil {
		return run, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spec.Deadline = time.Now().Add(timeout).UnixNano()
	if c.Quota {
		cg, why := newQuotaCgroup(quotaCPUs(c.Procs))
		if cg == nil {
			run.Skipped = why
			return run, nil
		}
		defer cg.remove()
		spec.CgroupProcs, run.Setup = filepath.Join(cg.dir, "cgroup.procs"), cg.desc
	}
	b, err := startBurners(exe, c.Burners, time.Now().Add(timeout+30*time.Second))
	defer b.stop()
	if err != nil {
		return run, err
	}
	if c.Burners > 0 {
		run.Setup = fmt.Sprintf("%d burner process(es), pids %v", c.Burners, b.pids())
		time.Sleep(burnerRamp)
	}
	run.Child, err = runChild(ctx, exe, spec, c.OneCPU)
	switch {
	case err != nil:
	case c.OneCPU && run.Child.CPUsAllowed != 1:
		err = fmt.Errorf("the child was allowed %d CPUs, want 1", run.Child.CPUsAllowed)
	case c.Quota && !strings.Contains(run.Child.Cgroup, filepath.Base(filepath.Dir(spec.CgroupProcs))):
		err = fmt.Errorf("the child is in cgroups %q, not in %s", run.Child.Cgroup, filepath.Dir(spec.CgroupProcs))
	}
	return run, err
}

// inOwnGroup makes cmd the leader of a new process group, which killGroup
// kills whole: nothing the section starts is left behind.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group cmd leads.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// withGOMAXPROCS returns the environment with GOMAXPROCS set to procs: set
// explicitly, the Go runtime neither derives it from the affinity mask or
// the cgroup quota nor changes it later.
func withGOMAXPROCS(procs int) []string {
	return append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", procs))
}

// burners are CPU-burning processes.
type burners []*exec.Cmd

// startBurners starts k burners that stop by themselves at deadline; stop
// them with stop (also after an error: those started are stopped).
func startBurners(exe string, k int, deadline time.Time) (burners, error) {
	var b burners
	for range k {
		cmd := exec.Command(exe, contendedBurnerArg, fmt.Sprint(deadline.UnixNano()))
		cmd.Env = withGOMAXPROCS(1)
		inOwnGroup(cmd)
		if err := cmd.Start(); err != nil {
			return b, fmt.Errorf("starting a burner: %w", err)
		}
		b = append(b, cmd)
	}
	return b, nil
}

// pids returns the burners' process ids.
func (b burners) pids() []int {
	var ps []int
	for _, cmd := range b {
		ps = append(ps, cmd.Process.Pid)
	}
	return ps
}

// stop kills every burner's process group and waits for the burners.
func (b burners) stop() {
	for _, cmd := range b {
		_ = killGroup(cmd) // a burner past its deadline is gone already
		_ = cmd.Wait()
	}
}

// runChild runs a child measuring spec, on one CPU if oneCPU, and returns
// its result. Cancelling ctx kills the child's process group.
func runChild(ctx context.Context, exe string, spec contendedSpec, oneCPU bool) (*contendedChild, error) {
	sj, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, contendedChildArg, string(sj))
	cmd.Env = withGOMAXPROCS(spec.Procs)
	inOwnGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if oneCPU {
		err = startOnOneCPU(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return nil, err
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("child: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res contendedChild
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("child's result: %w", err)
	}
	return &res, nil
}

// startOnOneCPU starts cmd confined to one CPU, the first the perf command
// may use: the child inherits the affinity of the thread that forks it, so
// the fork runs on a thread of its own, locked and confined first, and that
// thread ends with its goroutine (it is never unlocked). The Go runtime
// creates no thread from a locked one, so nothing else inherits the mask.
func startOnOneCPU(cmd *exec.Cmd) error {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return err
	}
	cpu := -1
	for i := range 8 * int(unsafe.Sizeof(all)) {
		if all.IsSet(i) {
			cpu = i
			break
		}
	}
	if cpu < 0 {
		return errors.New("no CPU in the affinity mask")
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the confined thread exits with this goroutine
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			errc <- err
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

// cpusAllowed returns how many CPUs the calling thread may run on.
func cpusAllowed() int {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		return runtime.NumCPU()
	}
	return s.Count()
}

// processCPU returns the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// quotaPeriodUS is the CFS period of the quota cgroup, in microseconds.
const quotaPeriodUS = 100000

// quotaCgroup is a cgroup with a CPU quota, made for one child.
type quotaCgroup struct {
	dir  string
	desc string
	undo func() // restores a parent's subtree_control, or nil
}

// newQuotaCgroup creates a cgroup limited to cpus CPUs: under cgroup v2
// (cpu.max) where a cgroup with the cpu controller can be made, else under
// the v1 cpu controller (cpu.cfs_quota_us). It returns nil and the reasons
// where neither is possible.
func newQuotaCgroup(cpus float64) (*quotaCgroup, string) {
	quota := int(cpus * quotaPeriodUS)
	name := fmt.Sprintf("perf-contended-%d", os.Getpid())
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err.Error()
	}
	own, _ := os.ReadFile("/proc/self/cgroup")
	var why []string
	cg, err := quotaV2(mounts, own, name, quota)
	if cg != nil {
		return cg, ""
	}
	why = append(why, "cgroup v2: "+err.Error())
	cg, err = quotaV1(mounts, own, name, quota)
	if cg != nil {
		cg.desc += " (" + why[0] + ")"
		return cg, ""
	}
	why = append(why, "cgroup v1: "+err.Error())
	return nil, strings.Join(why, "; ")
}

// quotaV2 makes the cgroup under cgroup v2: in the perf command's own
// cgroup or the nearest ancestor whose children may have the cpu controller.
func quotaV2(mounts, own []byte, name string, quota int) (*quotaCgroup, error) {
	mnt, path, err := ownCgroupDir(mounts, own, isV2Mount, isV2Entry)
	if err != nil {
		return nil, err
	}
	var errs []string
	for dir := filepath.Join(mnt, path); ; dir = filepath.Dir(dir) {
		undo, err := cpuForChildren(dir)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", dir, err))
			if len(dir) <= len(mnt) { // the hierarchy's root: no ancestor left
				return nil, errors.New(strings.Join(errs, "; "))
			}
			continue
		}
		cg := &quotaCgroup{dir: filepath.Join(dir, name), undo: undo}
		limit := fmt.Sprintf("%d %d", quota, quotaPeriodUS)
		if err := cg.create(map[string]string{"cpu.max": limit}); err != nil {
			return nil, err
		}
		cg.desc = fmt.Sprintf("cgroup v2 %s, cpu.max %q", cg.dir, limit)
		return cg, nil
	}
}

// cpuForChildren makes the cpu controller available to the children of the
// v2 cgroup dir, and returns the function that undoes that if it was not so
// before (nil otherwise).
func cpuForChildren(dir string) (undo func(), err error) {
	if !hasWord(readString(filepath.Join(dir, "cgroup.controllers")), "cpu") {
		return nil, errors.New("no cpu controller")
	}
	sub := filepath.Join(dir, "cgroup.subtree_control")
	if hasWord(readString(sub), "cpu") {
		return nil, nil
	}
	// The cgroup's children get the cpu controller only if the cgroup has
	// no processes of its own (the root excepted).
	if err := os.WriteFile(sub, []byte("+cpu"), 0); err != nil {
		return nil, fmt.Errorf("enabling cpu for children: %w", err)
	}
	return func() { _ = os.WriteFile(sub, []byte("-cpu"), 0) }, nil
}

// quotaV1 makes the cgroup under the cgroup v1 cpu controller, in the perf
// command's own cgroup there.
func quotaV1(mounts, own []byte, name string, quota int) (*quotaCgroup, error) {
	mnt, path, err := ownCgroupDir(mounts, own, isCPUV1Mount, isCPUV1Entry)
	if err != nil {
		return nil, err
	}
	cg := &quotaCgroup{dir: filepath.Join(mnt, path, name)}
	// The period first: a quota is checked against the period in force.
	err = cg.create(map[string]string{"cpu.cfs_period_us": fmt.Sprint(quotaPeriodUS)})
	if err == nil {
		err = os.WriteFile(filepath.Join(cg.dir, "cpu.cfs_quota_us"), []byte(fmt.Sprint(quota)), 0)
	}
	if err != nil {
		cg.remove()
		return nil, err
	}
	cg.desc = fmt.Sprintf("cgroup v1 cpu controller %s, cpu.cfs_quota_us %d per cpu.cfs_period_us %d", cg.dir, quota, quotaPeriodUS)
	return cg, nil
}

// create makes the cgroup's directory and writes its files; on an error it
// removes what it made. It first removes the cgroups that perf commands
// killed before their cleanup left beside it (empty ones of processes that
// are gone; the kernel refuses to remove a cgroup that has processes).
func (cg *quotaCgroup) create(files map[string]string) error {
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(cg.dir), "perf-contended-*"))
	for _, dir := range stale {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(dir), "perf-contended-%d", &pid); err == nil && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.Remove(dir)
		}
	}
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		if cg.undo != nil {
			cg.undo()
		}
		return err
	}
	for f, v := range files {
		if err := os.WriteFile(filepath.Join(cg.dir, f), []byte(v), 0); err != nil {
			cg.remove()
			return fmt.Errorf("writing %s: %w", f, err)
		}
	}
	return nil
}

// remove removes the cgroup, once its last process is gone (the kernel may
// take a moment after the child's exit), and undoes what was enabled for it.
func (cg *quotaCgroup) remove() {
	for range 100 {
		if err := os.Remove(cg.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if cg.undo != nil {
		cg.undo()
	}
}

// ownCgroupDir returns the mount point of the hierarchy isMount accepts and
// the perf command's cgroup in it, from /proc/self/mountinfo and
// /proc/self/cgroup.
func ownCgroupDir(mountinfo, procCgroup []byte, isMount func(fstype, opts string) bool, isEntry func(ctrls []string) bool) (mnt, path string, err error) {
	if mnt = mountOf(mountinfo, isMount); mnt == "" {
		return "", "", errors.New("not mounted")
	}
	path, ok := cgroupPath(procCgroup, isEntry)
	if !ok {
		return "", "", errors.New("no entry in /proc/self/cgroup")
	}
	return mnt, path, nil
}

// mountOf returns the mount point of the first mount in mountinfo that match
// accepts (by file system type and super options), or "".
func mountOf(mountinfo []byte, match func(fstype, opts string) bool) string {
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		if match(f[sep+1], f[sep+3]) {
			return f[4]
		}
	}
	return ""
}

// cgroupPath returns the path of the first hierarchy in /proc/self/cgroup
// (lines "id:controllers:path") whose controllers match accepts.
func cgroupPath(procCgroup []byte, match func(ctrls []string) bool) (string, bool) {
	for _, line := range strings.Split(string(procCgroup), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && match(strings.Split(f[1], ",")) {
			return f[2], true
		}
	}
	return "", false
}

// isV2Mount and isCPUV1Mount recognize, in mountinfo, the cgroup v2
// hierarchy and the v1 hierarchy with the cpu controller.
func isV2Mount(fstype, _ string) bool { return fstype == "cgroup2" }
func isCPUV1Mount(fstype, opts string) bool {
	return fstype == "cgroup" && slices.Contains(strings.Split(opts, ","), "cpu")
}

// isV2Entry and isCPUV1Entry recognize, in /proc/self/cgroup, the v2 entry
// (no controllers) and the v1 entry of the cpu controller.
func isV2Entry(ctrls []string) bool    { return len(ctrls) == 1 && ctrls[0] == "" }
func isCPUV1Entry(ctrls []string) bool { return slices.Contains(ctrls, "cpu") }

// readString returns the file's contents, or "" if it cannot be read.
func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// hasWord reports whether the space-separated list s holds w.
func hasWord(s, w string) bool { return slices.Contains(strings.Fields(s), w) }
