//go:build linux

package workers

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// applyPlacement pins and prioritizes the calling, locked thread for worker
// i, returning each failure (the worker carries on unplaced). restore, run on
// that thread before the goroutine ends, undoes it: the runtime keeps a main
// thread, whose settings tools report. Lowering nice needs CAP_SYS_NICE or RLIMIT_NICE.
func applyPlacement(p *placement, i int) (restore func() []error, errs []error) {
	var origSet unix.CPUSet
	var pinned, reniced bool
	var origNice, placedCPU int
	if p.affinity {
		if err := unix.SchedGetaffinity(0, &origSet); err != nil {
			errs = append(errs, fmt.Errorf("sched_getaffinity: %w", err))
		} else if cpu, err := pin(&origSet, p.cpus, i); err != nil {
			errs = append(errs, err)
		} else {
			pinned, placedCPU = true, cpu
		}
	}
	if p.nice != nil { // PRIO_PROCESS, 0: the calling thread; the syscall gives 20 - nice
		if prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err != nil {
			errs = append(errs, fmt.Errorf("getpriority: %w", err))
		} else if err := unix.Setpriority(unix.PRIO_PROCESS, 0, *p.nice); err != nil {
			errs = append(errs, fmt.Errorf("nice %d: %w", *p.nice, err))
		} else {
			origNice, reniced = 20-prio, true
		}
	}
	return func() []error {
		var errs []error
		if reniced {
			if err := unix.Setpriority(unix.PRIO_PROCESS, 0, origNice); err != nil {
				errs = append(errs, fmt.Errorf("restoring nice %d (was %d): %w", origNice, *p.nice, err))
			}
		}
		if pinned {
			if err := unix.SchedSetaffinity(0, &origSet); err != nil {
				errs = append(errs, fmt.Errorf("restoring affinity (was CPU %d) to %d CPUs: %w", placedCPU, origSet.Count(), err))
			}
		}
		return errs
	}, errs
}

// pin pins the calling thread to worker i's CPU of cpus (or allowed) and returns it.
func pin(allowed *unix.CPUSet, cpus []int, i int) (int, error) {
	var cpu int
	if len(cpus) > 0 {
		cpu = cpus[i%len(cpus)]
		if cpu >= len(allowed)*64 || !allowed.IsSet(cpu) {
			return 0, fmt.Errorf("affinity to CPU %d: not in the process's allowed set (%d CPUs)", cpu, allowed.Count())
		}
	} else { // the (i mod count)-th allowed CPU
		for k := i % allowed.Count(); k > 0 || !allowed.IsSet(cpu); cpu++ {
			if allowed.IsSet(cpu) {
				k--
			}
		}
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return 0, fmt.Errorf("affinity to CPU %d: %w", cpu, err)
	}
	return cpu, nil
}
