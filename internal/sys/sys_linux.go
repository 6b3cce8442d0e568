//go:build linux

package sys

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// AllowedCPUs returns the CPUs the calling thread may run on (taskset,
// cgroup cpuset), ascending.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

// PinThread locks the calling goroutine to its OS thread and binds that
// thread to cpu. The caller must not call runtime.UnlockOSThread afterwards
// if it wants the binding to stay with the goroutine.
func PinThread(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin thread to CPU %d: %w", cpu, err)
	}
	return nil
}

// CurrentCPU returns the CPU the calling thread runs on now.
func CurrentCPU() int {
	var c, node uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptrOf(&c), uintptrOf(&node), 0); e != 0 {
		return -1
	}
	return int(c)
}

// SetTimerSlack sets the calling thread's timer slack (PR_SET_TIMERSLACK)
// in nanoseconds; sleeps then wake at most that much after their deadline
// on top of the scheduler's own latency.
func SetTimerSlack(ns uint64) error {
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(ns), 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_TIMERSLACK, %d): %w", ns, err)
	}
	return nil
}

// ThreadCPUTimeNs returns the CPU time consumed by the calling thread.
func ThreadCPUTimeNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// ProcessCPUTimeNs returns the CPU time consumed by the whole process.
func ProcessCPUTimeNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// MonotonicNs reads CLOCK_MONOTONIC in nanoseconds (the clock of the wpg
// signature's transmit timestamp, comparable across processes on one host).
// It is the runtime's vDSO read, tens of nanoseconds, not a system call.
func MonotonicNs() int64 { return nanotime() }

// MonotonicSyscallNs reads CLOCK_MONOTONIC through clock_gettime(2); for
// tests of MonotonicNs.
func MonotonicSyscallNs() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// MemlockLimit returns the soft RLIMIT_MEMLOCK in bytes (unix.RLIM_INFINITY
// as ^uint64(0)).
func MemlockLimit() (uint64, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		return 0, fmt.Errorf("getrlimit(RLIMIT_MEMLOCK): %w", err)
	}
	return rl.Cur, nil
}

// Gettid returns the calling thread's id.
func Gettid() int { return unix.Gettid() }

// IsPermission reports whether err is a permission failure (EPERM/EACCES).
func IsPermission(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
}
