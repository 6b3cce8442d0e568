//go:build linux

package sys

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// SleepUntilMonotonic sleeps until CLOCK_MONOTONIC reaches ns
// (clock_nanosleep with TIMER_ABSTIME). An absolute deadline is immune to
// the time spent between computing it and entering the kernel. It returns
// early, without error, when a signal interrupts the sleep; the caller
// re-checks its clock anyway.
func SleepUntilMonotonic(ns int64) error {
	ts := unix.NsecToTimespec(ns)
	err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
	if err != nil && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, %d): %w", ns, err)
	}
	return nil
}

// TimerSlackNs returns the calling thread's timer slack (PR_GET_TIMERSLACK).
func TimerSlackNs() (uint64, error) {
	r, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return 0, fmt.Errorf("prctl(PR_GET_TIMERSLACK): %w", err)
	}
	return uint64(r), nil
}

// SleepUntilMonotonicRaw is SleepUntilMonotonic without telling the Go
// scheduler: the thread keeps its P while asleep, so waking needs no P
// hand-back, but a stop-the-world waits for the sleep to end. Keep such
// sleeps short (the pacer caps them at 1 ms).
func SleepUntilMonotonicRaw(ns int64) error {
	ts := unix.NsecToTimespec(ns)
	_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptrOf(&ts), 0, 0, 0)
	if e != 0 && e != unix.EINTR {
		return fmt.Errorf("clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, %d): %w", ns, e)
	}
	return nil
}

// SetThreadFIFO moves the calling thread (not the whole process) to the
// SCHED_FIFO real-time policy at priority prio (1–99): it then runs as
// soon as it wakes, ahead of every normal thread. It needs CAP_SYS_NICE
// (or an RLIMIT_RTPRIO allowing prio); the error unwraps to EPERM.
func SetThreadFIFO(prio int) error {
	if prio < 1 || prio > 99 {
		return fmt.Errorf("SCHED_FIFO priority %d: want 1 to 99", prio)
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("sched_setattr(SCHED_FIFO, priority %d) on thread %d: %w", prio, unix.Gettid(), err)
	}
	return nil
}

// SetThreadNormal moves the calling thread back to the normal scheduler
// (SCHED_OTHER), keeping its nice value.
func SetThreadNormal() error {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return fmt.Errorf("sched_getattr on thread %d: %w", unix.Gettid(), err)
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: 0, Nice: a.Nice}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("sched_setattr(SCHED_OTHER) on thread %d: %w", unix.Gettid(), err)
	}
	return nil
}

// ThreadSchedPolicy returns the calling thread's scheduling policy
// (unix.SCHED_OTHER = 0, SCHED_FIFO = 1, …) and real-time priority.
func ThreadSchedPolicy() (policy, prio int, err error) {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("sched_getattr on thread %d: %w", unix.Gettid(), err)
	}
	return int(a.Policy), int(a.Priority), nil
}
