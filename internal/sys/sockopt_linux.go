package sys

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Options of packet sockets (linux/if_packet.h) that a caller outside
// this package sets with SetsockoptInt.
const (
	SolPacket            = unix.SOL_PACKET
	PacketIgnoreOutgoing = unix.PACKET_IGNORE_OUTGOING // Linux 4.20: the socket sees no frame the host sends
	SolSocket            = unix.SOL_SOCKET
	SoRcvbufForce        = unix.SO_RCVBUFFORCE // a receive buffer over net.core.rmem_max (CAP_NET_ADMIN)
)

// SetsockoptInt sets an integer option of the socket behind rc (a
// connection's SyscallConn): setsockopt(2).
func SetsockoptInt(rc syscall.RawConn, level, opt, v int) error {
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), level, opt, v) }); err != nil {
		return err
	}
	return serr
}
