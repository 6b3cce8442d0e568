//go:build linux

package sys

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReadRaw is one read(2) made without the runtime's system-call
// bookkeeping (RawSyscall: no entersyscall/exitsyscall). A bulk copy of a
// large frame through a socket or pipe takes 30–100 µs in the kernel;
// through the ordinary path sysmon finds the thread in a system call for
// longer than its 20 µs tick, takes the P away and starts another thread to
// poll the network (a futex wake and an epoll_pwait per call), which on a
// small machine runs on the CPU the peer process needs, and the caller then
// has to win a P back.
//
// While the call runs this thread cannot stop for the garbage collector, so
// fd must bound how long a call can wait: O_NONBLOCK, or a socket with
// SO_RCVTIMEO (SetSocketTimeouts). EINTR is returned, not retried, so that
// the caller's loop passes a preemption point; IsAgain reports both.
func ReadRaw(fd int, b []byte) (int, error) { return rawIO(unix.SYS_READ, fd, b) }

// WriteRaw is ReadRaw's write(2); fd must bound the wait the same way
// (O_NONBLOCK or SO_SNDTIMEO).
func WriteRaw(fd int, b []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, b) }

// rawIO makes the read(2) or write(2) (trap) of ReadRaw and WriteRaw.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// IsAgain reports whether a call moved nothing but may be retried: EAGAIN
// (a non-blocking descriptor, or a socket timeout expired) or EINTR.
func IsAgain(err error) bool {
	return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)
}

// DetachFd returns a duplicate of c's descriptor that Go's network poller
// does not watch, and closes c. The runtime registers a net.Conn's
// descriptor in its epoll set (edge-triggered): each time the socket
// becomes readable or writable, a runtime thread idling in epoll_pwait
// wakes, finds no goroutine waiting and sleeps again — hundreds of times a
// second on a busy data path that never parks in the poller (measured: 1,259
// wake-ups in 2 s on each side of a unix stream), each on a CPU the other
// process needs. Closing c deletes the descriptor from the epoll set
// (EPOLL_CTL_DEL, before close), so the duplicate — which shares the open
// socket and its file status flags — is not watched. The caller owns the
// returned descriptor (CloseFd).
func DetachFd(c interface {
	syscall.Conn
	io.Closer
}) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("raw connection: %w", err)
	}
	nfd, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, fmt.Errorf("raw connection: %w", err)
	}
	if derr != nil {
		return -1, fmt.Errorf("fcntl(F_DUPFD_CLOEXEC): %w", derr)
	}
	if err := c.Close(); err != nil {
		unix.Close(nfd)
		return -1, err
	}
	return nfd, nil
}

// SetSocketTimeouts sets SO_SNDTIMEO and SO_RCVTIMEO of the socket fd to d:
// a blocking send or receive on it returns EAGAIN (or what it moved) after
// waiting d.
func SetSocketTimeouts(fd int, d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return fmt.Errorf("setsockopt(SO_SNDTIMEO): %w", err)
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("setsockopt(SO_RCVTIMEO): %w", err)
	}
	return nil
}

// VmspliceRaw is one vmsplice(2) of b into the pipe fd with
// SPLICE_F_NONBLOCK, made like ReadRaw without the runtime's bookkeeping:
// it moves references to b's pages (no copy), as many as the pipe has room
// for, and returns the bytes moved, or EAGAIN when the pipe is full. b must
// stay alive and unmodified until the reader has consumed those bytes.
func VmspliceRaw(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	n, _, e := unix.RawSyscall6(unix.SYS_VMSPLICE, uintptr(fd), uintptrOf(&iov), 1, unix.SPLICE_F_NONBLOCK, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// PollOut waits up to timeout (negative: forever) for fd to become writable
// and reports whether it did; a hang-up or error on fd counts as writable, so
// that the next write(2) returns the reason.
func PollOut(fd int, timeout time.Duration) (bool, error) { return pollOne(fd, unix.POLLOUT, timeout) }

// pollOne polls fd for events up to timeout (< 0: no limit, rounded up to
// a millisecond) and reports whether any came (or a hang-up or error).
func pollOne(fd int, events int16, timeout time.Duration) (bool, error) {
	ms := -1
	if timeout >= 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: events}}
	n, err := unix.Poll(fds[:], ms)
	if errors.Is(err, unix.EINTR) {
		return false, nil // a signal: the caller looks again
	}
	if err != nil {
		return false, fmt.Errorf("poll fd %d: %w", fd, err)
	}
	return n > 0, nil
}
