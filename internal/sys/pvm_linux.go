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
	return processVM(unix.ProcessVMReadv, "process_vm_readv", pid, local, remote)
}

// ProcessVMWritev copies local to the remote address of process pid with
// one process_vm_writev(2) call and returns the bytes copied (possibly
// fewer than len(local)).
func ProcessVMWritev(pid int, local []byte, remote uintptr) (int, error) {
	return processVM(unix.ProcessVMWritev, "process_vm_writev", pid, local, remote)
}

// processVM makes one call of process_vm_readv or process_vm_writev
// (named op) between local and the remote address of process pid,
// retried on EINTR.
func processVM(call func(int, []unix.Iovec, []unix.RemoteIovec, uint) (int, error), op string, pid int, local []byte, remote uintptr) (int, error) {
	l := []unix.Iovec{{Base: &local[0]}}
	l[0].SetLen(len(local))
	r := []unix.RemoteIovec{{Base: remote, Len: len(local)}}
	for {
		n, err := call(pid, l, r, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("%s(pid %d, %d bytes at %#x): %w", op, pid, len(local), remote, err)
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

// PVMBatch moves many buffers with one process_vm_readv/writev call; it
// keeps its iovec arrays so that a transfer allocates nothing.
type PVMBatch struct {
	local  []unix.Iovec
	remote []unix.RemoteIovec
	// Calls counts system calls made.
	Calls uint64
}

// NewPVMBatch returns a batch for up to n buffers per call (n ≤ 1024).
func NewPVMBatch(n int) *PVMBatch {
	n = min(max(n, 1), 1024)
	return &PVMBatch{local: make([]unix.Iovec, 0, n), remote: make([]unix.RemoteIovec, 0, n)}
}

// Max returns the most buffers one call takes.
func (b *PVMBatch) Max() int { return cap(b.local) }

// Transfer copies remote[i] (an address in process pid) into locals[i]
// (read) or locals[i] to remote[i] (write), for every i, completely:
// partial transfers are resumed where they stopped. len(locals) ≤ Max().
func (b *PVMBatch) Transfer(pid int, write bool, locals [][]byte, remote []uintptr) error {
	first, off := 0, 0
	for first < len(locals) {
		b.local, b.remote = b.local[:0], b.remote[:0]
		total := 0
		for i := first; i < len(locals); i++ {
			l := locals[i]
			o := 0
			if i == first {
				o = off
			}
			if len(l)-o == 0 {
				continue
			}
			iov := unix.Iovec{Base: &l[o]}
			iov.SetLen(len(l) - o)
			b.local = append(b.local, iov)
			b.remote = append(b.remote, unix.RemoteIovec{Base: remote[i] + uintptr(o), Len: len(l) - o})
			total += len(l) - o
		}
		if total == 0 {
			return nil
		}
		// A raw call (no entersyscall/exitsyscall, see ReadRaw): one
		// batch copies for tens of microseconds, and through the ordinary
		// path sysmon would hand the P to another thread during each. The
		// call never waits for anything but the copy.
		trap := uintptr(unix.SYS_PROCESS_VM_READV)
		if write {
			trap = unix.SYS_PROCESS_VM_WRITEV
		}
		var n int
		var err error
		for {
			r, _, e := unix.RawSyscall6(trap, uintptr(pid), uintptrOf(&b.local[0]), uintptr(len(b.local)),
				uintptrOf(&b.remote[0]), uintptr(len(b.remote)), 0)
			n, err = int(r), nil
			if e != 0 {
				n, err = 0, e
			}
			if e != unix.EINTR {
				break
			}
		}
		b.Calls++
		if err != nil {
			op := "process_vm_readv"
			if write {
				op = "process_vm_writev"
			}
			return fmt.Errorf("%s(pid %d, %d buffers, %d bytes): %w", op, pid, len(b.local), total, err)
		}
		if n == 0 {
			return fmt.Errorf("process_vm transfer with pid %d made no progress (remote memory unmapped?)", pid)
		}
		// Advance (first, off) by n bytes.
		for n > 0 && first < len(locals) {
			left := len(locals[first]) - off
			if n < left {
				off += n
				n = 0
				break
			}
			n -= left
			first++
			off = 0
		}
		for first < len(locals) && len(locals[first]) == off {
			first++
			off = 0
		}
	}
	return nil
}
