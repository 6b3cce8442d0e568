//go:build linux

package sys

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Futex operations (linux/futex.h); shared, not FUTEX_PRIVATE_FLAG,
// because the words live in memory mapped by two processes.
const (
	futexWait = 0
	futexWake = 1
)

// FutexWait sleeps while *w == val, at most timeout (≤ 0: no limit), on a
// futex shared between processes (the word lives in a MAP_SHARED
// mapping). It returns on a wake, a value change, a signal or the timeout;
// callers re-check their condition.
func FutexWait(w *atomic.Uint32, val uint32, timeout time.Duration) {
	var tsp *unix.Timespec
	if timeout > 0 {
		ts := unix.NsecToTimespec(int64(timeout))
		tsp = &ts
	}
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWait, uintptr(val),
		uintptr(unsafe.Pointer(tsp)), 0, 0)
}

// FutexWake wakes up to n waiters sleeping on w.
func FutexWake(w *atomic.Uint32, n int) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWake, uintptr(n), 0, 0, 0)
}
