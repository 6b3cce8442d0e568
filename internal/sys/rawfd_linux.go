//go:build linux

package sys

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ConnFd returns the descriptor behind c (a *net.UnixConn, *net.TCPConn, …)
// for callers that do their own read(2)/write(2) calls on it instead of going
// through Go's network poller: a data path that parks in the poller pays a
// goroutine hand-off (and, on a locked OS thread, a thread wake-up) per wait,
// where a poll(2) in the calling thread pays one system call. The descriptor
// stays owned by c (non-blocking, closed with c); c must not be read or
// written concurrently.
func ConnFd(c syscall.Conn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("raw connection: %w", err)
	}
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return -1, fmt.Errorf("raw connection: %w", err)
	}
	return fd, nil
}

// PollOut waits up to timeout (negative: forever) for fd to become writable
// and reports whether it did; a hang-up or error on fd counts as writable, so
// that the next write(2) returns the reason.
func PollOut(fd int, timeout time.Duration) (bool, error) {
	ms := -1
	if timeout >= 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	var fds [1]unix.PollFd
	fds[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLOUT}
	n, err := unix.Poll(fds[:], ms)
	if errors.Is(err, unix.EINTR) {
		return false, nil // a signal: the caller looks again
	}
	if err != nil {
		return false, fmt.Errorf("poll fd %d: %w", fd, err)
	}
	return n > 0, nil
}
