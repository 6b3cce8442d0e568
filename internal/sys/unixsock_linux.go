//go:build linux

package sys

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// SendFds writes msg on the unix socket c with fds attached (SCM_RIGHTS).
func SendFds(c *net.UnixConn, msg []byte, fds ...int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, oobn, err := c.WriteMsgUnix(msg, oob, nil)
	if err != nil {
		return fmt.Errorf("send on %s: %w", c.LocalAddr(), err)
	}
	if n != len(msg) || oobn != len(oob) {
		return fmt.Errorf("send on %s: short write (%d of %d bytes)", c.LocalAddr(), n, len(msg))
	}
	return nil
}

// RecvFds reads one message into buf from the unix socket c and returns
// its length and the descriptors that came with it (SCM_RIGHTS). The
// caller owns the descriptors.
func RecvFds(c *net.UnixConn, buf []byte) (int, []int, error) {
	oob := make([]byte, unix.CmsgSpace(4*8))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return 0, nil, err
	}
	if n == 0 && oobn == 0 {
		return 0, nil, fmt.Errorf("receive on %s: peer closed the socket", c.LocalAddr())
	}
	var fds []int
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return n, nil, fmt.Errorf("parse control message: %w", err)
	}
	for _, m := range msgs {
		f, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, f...)
		}
	}
	return n, fds, nil
}

// PeerPID returns the process id of the peer of a connected unix socket
// (SO_PEERCRED).
func PeerPID(c *net.UnixConn) (int, error) {
	cred, err := peerCred(c)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}

// peerCred reads SO_PEERCRED of a connected unix socket.
func peerCred(c *net.UnixConn) (*unix.Ucred, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var serr error
	if err := rc.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, fmt.Errorf("getsockopt(SO_PEERCRED): %w", serr)
	}
	return cred, nil
}

// SetSocketBuffers sets SO_SNDBUF and SO_RCVBUF of c to bytes, using the
// *FORCE variants (CAP_NET_ADMIN) to pass net.core.wmem_max/rmem_max when
// allowed, and returns the effective sizes the kernel reports (which
// doubles the request for its bookkeeping).
func SetSocketBuffers(c syscall.Conn, bytes int) (snd, rcv int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		f := int(fd)
		if unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, bytes) != nil {
			if e := unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_SNDBUF, bytes); e != nil {
				serr = fmt.Errorf("setsockopt(SO_SNDBUF, %d): %w", bytes, e)
			}
		}
		if unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bytes) != nil {
			if e := unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_RCVBUF, bytes); e != nil && serr == nil {
				serr = fmt.Errorf("setsockopt(SO_RCVBUF, %d): %w", bytes, e)
			}
		}
		snd, _ = unix.GetsockoptInt(f, unix.SOL_SOCKET, unix.SO_SNDBUF)
		rcv, _ = unix.GetsockoptInt(f, unix.SOL_SOCKET, unix.SO_RCVBUF)
	})
	if cerr != nil {
		return 0, 0, cerr
	}
	return snd, rcv, serr
}

// ProcessAlive reports whether a process with id pid exists (kill(pid, 0)).
func ProcessAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// PeerUID returns the user id of the peer of a connected unix socket
// (SO_PEERCRED).
func PeerUID(c *net.UnixConn) (int, error) {
	cred, err := peerCred(c)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
