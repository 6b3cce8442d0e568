//go:build linux

package sys

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// YamaPtraceScopePath is Yama's switch; it governs process_vm_readv/writev
// like ptrace attach.
const YamaPtraceScopePath = "/proc/sys/kernel/yama/ptrace_scope"

// ProcessVMReadv copies from the remote address of process pid into local
// with one process_vm_readv(2) call and returns the bytes copied, which may
// be fewer than len(local) (the copy stops at the first remote fault).
func ProcessVMReadv(pid int, local []byte, remote uintptr) (int, error) {
	l := []unix.Iovec{{Base: &local[0]}}
	l[0].SetLen(len(local))
	r := []unix.RemoteIovec{{Base: remote, Len: len(local)}}
	for {
		n, err := unix.ProcessVMReadv(pid, l, r, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("process_vm_readv(pid %d, %d bytes at %#x): %w", pid, len(local), remote, err)
		}
		return n, nil
	}
}

// ProcessVMWritev copies local to the remote address of process pid with
// one process_vm_writev(2) call and returns the bytes copied (possibly
// fewer than len(local)).
func ProcessVMWritev(pid int, local []byte, remote uintptr) (int, error) {
	l := []unix.Iovec{{Base: &local[0]}}
	l[0].SetLen(len(local))
	r := []unix.RemoteIovec{{Base: remote, Len: len(local)}}
	for {
		n, err := unix.ProcessVMWritev(pid, l, r, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("process_vm_writev(pid %d, %d bytes at %#x): %w", pid, len(local), remote, err)
		}
		return n, nil
	}
}

// AllowAnyPtracer lets any process of the same user read and write this
// process's memory under Yama ptrace_scope 1 (prctl PR_SET_PTRACER with
// PR_SET_PTRACER_ANY). Without Yama the call fails with EINVAL, which is
// harmless and reported as nil.
func AllowAnyPtracer() error {
	const prSetPtracerAny = ^uintptr(0)
	err := unix.Prctl(unix.PR_SET_PTRACER, prSetPtracerAny, 0, 0, 0)
	if err == nil || errors.Is(err, unix.EINVAL) {
		return nil
	}
	return fmt.Errorf("prctl(PR_SET_PTRACER, ANY): %w", err)
}

// YamaPtraceScope returns Yama's ptrace_scope, or ok=false when the
// kernel has no Yama.
func YamaPtraceScope() (scope int, ok bool) {
	b, err := os.ReadFile(YamaPtraceScopePath)
	if err != nil {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return v, err == nil
}

// IsESRCH reports whether err says the process does not exist.
func IsESRCH(err error) bool { return errors.Is(err, unix.ESRCH) }
