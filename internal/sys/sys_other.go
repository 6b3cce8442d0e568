//go:build !linux

package sys

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// wpg is a Linux tool. Outside Linux these functions keep the portable
// packages (engine, pace, recv) compiling and say plainly what is missing.

func notOnThisOS(what string) error {
	return fmt.Errorf("%s: %w on %s (wpg's data paths need Linux)", what, ErrNotSupported, runtime.GOOS)
}

// AllowedCPUs returns every CPU (affinity cannot be read here).
func AllowedCPUs() ([]int, error) {
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus, nil
}

// PinThread locks the goroutine to its thread; pinning to a CPU is not supported.
func PinThread(cpu int) error {
	runtime.LockOSThread()
	return notOnThisOS(fmt.Sprintf("pin thread to CPU %d", cpu))
}

// CurrentCPU is unknown here.
func CurrentCPU() int { return -1 }

// SetTimerSlack is not supported here.
func SetTimerSlack(ns uint64) error { return notOnThisOS("PR_SET_TIMERSLACK") }

// ThreadCPUTimeNs is not available here; it returns 0.
func ThreadCPUTimeNs() int64 { return 0 }

// ProcessCPUTimeNs is not available here; it returns 0.
func ProcessCPUTimeNs() int64 { return 0 }

// MonotonicNs reads the runtime's monotonic clock.
func MonotonicNs() int64 { return nanotime() }

// MonotonicSyscallNs reads the same clock (there is no separate system call path here).
func MonotonicSyscallNs() int64 { return nanotime() }

// MemlockLimit is unknown here.
func MemlockLimit() (uint64, error) { return 0, notOnThisOS("RLIMIT_MEMLOCK") }

// Gettid is not available here; it returns the process id.
func Gettid() int { return os.Getpid() }

// IsPermission reports whether err is a permission failure.
func IsPermission(err error) bool { return errors.Is(err, os.ErrPermission) }

// RunInNetns is not supported here.
func RunInNetns(nsPath string, f func() error) error {
	return notOnThisOS("network namespace " + nsPath)
}

// JoinNetns is not supported here.
func JoinNetns(nsPath string) error {
	return notOnThisOS("network namespace " + nsPath)
}

// ThreadSchedPolicy is not available here.
func ThreadSchedPolicy() (policy, prio int, err error) {
	return 0, 0, notOnThisOS("sched_getscheduler")
}

// IsPipe reports false here: the pipe paths it serves are Linux only.
func IsPipe(fd int) bool { return false }

// LinkParent is not supported: network interfaces are Linux's here.
func LinkParent(index int) (bus, dev string, found bool, err error) {
	return "", "", false, notOnThisOS("link parent")
}

// Links is not supported: network interfaces are Linux's here.
func Links() ([]Link, error) { return nil, notOnThisOS("links") }

// EthtoolSpeed is not supported: network interfaces are Linux's here.
func EthtoolSpeed(ifname string) (int, error) {
	return 0, notOnThisOS("ethtool " + ifname)
}

// EthtoolDriver is not supported: network interfaces are Linux's here.
func EthtoolDriver(ifname string) (string, error) {
	return "", notOnThisOS("ethtool " + ifname)
}
