//go:build linux

package workers

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// applyPlacement pins and prioritizes the calling thread for worker i. It
// runs on the worker's goroutine after runtime.LockOSThread. Each failure is
// returned; the worker carries on unplaced.
func applyPlacement(p *placement, i int) []error {
	var errs []error
	if p.affinity {
		if err := pin(p.cpus, i); err != nil {
			errs = append(errs, err)
		}
	}
	if p.nice != nil {
		// PRIO_PROCESS with who = 0 names the calling thread on Linux (nice is
		// per thread there, despite the name).
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, *p.nice); err != nil {
			errs = append(errs, fmt.Errorf("nice %d: %w", *p.nice, err))
		}
	}
	return errs
}

func pin(cpus []int, i int) error {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpu int
	if len(cpus) > 0 {
		cpu = cpus[i%len(cpus)]
		if cpu >= len(allowed)*64 || !allowed.IsSet(cpu) {
			return fmt.Errorf("affinity to CPU %d: not in the process's allowed set (%d CPUs)", cpu, allowed.Count())
		}
	} else {
		k := i % allowed.Count()
		for c := 0; ; c++ {
			if allowed.IsSet(c) {
				if k == 0 {
					cpu = c
					break
				}
				k--
			}
		}
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("affinity to CPU %d: %w", cpu, err)
	}
	return nil
}
