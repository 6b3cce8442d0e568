//go:build linux

package sys

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// PipeMaxSizePath is the sysctl bounding an unprivileged F_SETPIPE_SZ.
const PipeMaxSizePath = "/proc/sys/fs/pipe-max-size"

// NewPipe creates a pipe (O_CLOEXEC, blocking) and returns its read and
// write ends.
func NewPipe() (r, w int, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return -1, -1, fmt.Errorf("pipe2: %w", err)
	}
	return p[0], p[1], nil
}

// OpenFIFO opens the FIFO at path for writing or reading, in blocking mode
// (open blocks until the other side opens too). It creates the FIFO (mode
// 0600) when path does not exist and refuses a path that is not a FIFO.
func OpenFIFO(path string, write bool) (int, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		if err := unix.Mkfifo(path, 0o600); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("mkfifo %s: %w", path, err)
		}
	case err != nil:
		return -1, fmt.Errorf("stat %s: %w", path, err)
	case st.Mode&unix.S_IFMT != unix.S_IFIFO:
		return -1, fmt.Errorf("--fifo %s exists and is not a FIFO: remove it or choose another path", path)
	}
	flags := unix.O_RDONLY
	if write {
		flags = unix.O_WRONLY
	}
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("open FIFO %s: %w", path, err)
		}
		return fd, nil
	}
}

// IsPipe reports whether fd is a pipe or FIFO.
func IsPipe(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// PipeSize returns the capacity of the pipe fd in bytes (F_GETPIPE_SZ).
func PipeSize(fd int) (int, error) {
	n, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return 0, fmt.Errorf("fcntl(F_GETPIPE_SZ): %w", err)
	}
	return n, nil
}

// SetPipeSize asks for a capacity of n bytes (F_SETPIPE_SZ) and returns the
// capacity the kernel set (rounded up to a power-of-two number of pages).
// Growing past /proc/sys/fs/pipe-max-size without CAP_SYS_RESOURCE, or
// while the user is over pipe-user-pages-soft, fails with EPERM.
func SetPipeSize(fd, n int) (int, error) {
	got, err := unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, n)
	if err != nil {
		return 0, fmt.Errorf("fcntl(F_SETPIPE_SZ, %d): %w", n, err)
	}
	return got, nil
}

// PipeMaxSize reads /proc/sys/fs/pipe-max-size.
func PipeMaxSize() (int, error) {
	b, err := os.ReadFile(PipeMaxSizePath)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", PipeMaxSizePath, err)
	}
	return n, nil
}

// Write is one write(2) call, retried on EINTR.
func Write(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err
	}
}

// Read is one read(2) call, retried on EINTR.
func Read(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err
	}
}

// Vmsplice is one vmsplice(2) call moving references to the pages of b
// into the pipe fd (no copy). b must stay alive and unmodified until the
// reader has consumed those bytes.
func Vmsplice(fd int, b []byte) (int, error) {
	iov := []unix.Iovec{{Base: &b[0]}}
	iov[0].SetLen(len(b))
	for {
		n, err := unix.Vmsplice(fd, iov, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err
	}
}

// CloseFd closes fd, ignoring -1.
func CloseFd(fd int) error {
	if fd < 0 {
		return nil
	}
	return unix.Close(fd)
}

// IsEPIPE reports whether err is a broken pipe (reader gone).
func IsEPIPE(err error) bool { return errors.Is(err, unix.EPIPE) }

// IsConnReset reports whether err says the peer closed a socket.
func IsConnReset(err error) bool {
	return errors.Is(err, unix.ECONNRESET) || errors.Is(err, unix.EPIPE)
}

// PollIn waits up to timeout (< 0: no limit) until fd is readable or hung
// up and reports whether it is.
func PollIn(fd int, timeout time.Duration) (bool, error) { return pollOne(fd, unix.POLLIN, timeout) }

// PipeBytes returns the bytes queued in the pipe fd (FIONREAD; either end).
func PipeBytes(fd int) (int, error) {
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // TIOCINQ == FIONREAD
	if err != nil {
		return 0, fmt.Errorf("ioctl(FIONREAD): %w", err)
	}
	return n, nil
}

// Yield gives the CPU to another thread (sched_yield).
func Yield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// PipeReaderGone reports whether the pipe whose write end is fd has lost
// all its readers (poll reports POLLERR on the write end then).
func PipeReaderGone(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0
}

// SetNonblock sets or clears O_NONBLOCK on fd and returns whether it was
// set before (to restore it).
func SetNonblock(fd int, on bool) (was bool, err error) {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return false, fmt.Errorf("fcntl(F_GETFL): %w", err)
	}
	if err := unix.SetNonblock(fd, on); err != nil {
		return false, fmt.Errorf("set O_NONBLOCK: %w", err)
	}
	return fl&unix.O_NONBLOCK != 0, nil
}

// IsEAGAIN reports whether err says a non-blocking call would block.
func IsEAGAIN(err error) bool { return errors.Is(err, unix.EAGAIN) }

// ReopenPipe opens the pipe or FIFO behind fd again through
// /proc/self/fd/N, non-blocking, for writing or reading, and returns the
// new descriptor. It is a file description of its own: O_NONBLOCK set on
// it does not change the flags of fd's description, which the processes
// of a shell pipeline share (a process killed with SIGKILL cannot put
// those back, and the next writer would get EAGAIN).
func ReopenPipe(fd int, write bool) (int, error) {
	flags := unix.O_RDONLY
	if write {
		flags = unix.O_WRONLY
	}
	path := "/proc/self/fd/" + strconv.Itoa(fd)
	for {
		nfd, err := unix.Open(path, flags|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("reopen %s: %w", path, err)
		}
		return nfd, nil
	}
}

// Nonblocking reports whether O_NONBLOCK is set on fd's file description.
func Nonblocking(fd int) (bool, error) {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return false, fmt.Errorf("fcntl(F_GETFL): %w", err)
	}
	return fl&unix.O_NONBLOCK != 0, nil
}
