//go:build linux

package tpacket

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr on 64-bit Linux (x/sys has none).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// Mmsg is an AF_PACKET socket (protocol 0, bound to an interface)
// sending batches with sendmmsg from its own staging buffers.
type Mmsg struct {
	p    packetFD
	slab []byte
	bufs [][]byte
	iov  []unix.Iovec
	msgs []mmsghdr
}

// NewMmsg opens a packet socket on ifindex with batch staging buffers
// of maxFrame bytes. On error nothing is left open.
func NewMmsg(ifindex, batch, maxFrame int, qdiscBypass bool) (*Mmsg, error) {
	if batch < 1 || maxFrame < 1 {
		return nil, fmt.Errorf("sendmmsg socket: batch %d or frame size %d invalid", batch, maxFrame)
	}
	p, err := openPacket("sendmmsg socket")
	if err != nil {
		return nil, err
	}
	m := &Mmsg{p: *p}
	if qdiscBypass {
		if err := m.p.setInt(unix.PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS"); err != nil {
			m.p.close()
			return nil, err
		}
	}
	if err := m.p.bind(ifindex, 0); err != nil {
		m.p.close()
		return nil, err
	}
	m.slab = make([]byte, batch*maxFrame)
	m.bufs = make([][]byte, batch)
	m.iov = make([]unix.Iovec, batch)
	m.msgs = make([]mmsghdr, batch)
	for i := range batch {
		m.bufs[i] = m.slab[i*maxFrame : (i+1)*maxFrame : (i+1)*maxFrame]
		m.iov[i].Base = &m.bufs[i][0]
		m.msgs[i].hdr.Iov = &m.iov[i]
		m.msgs[i].hdr.Iovlen = 1
	}
	return m, nil
}

// Buffers returns the staging buffers.
func (m *Mmsg) Buffers() [][]byte { return m.bufs }

// Send transmits the first len(lens) staging buffers with sendmmsg (the
// kernel takes at most 1024 per call, UIO_MAXIOV, so larger batches take
// several), blocking while the socket's send buffer is full, and returns
// how many frames the kernel accepted.
func (m *Mmsg) Send(lens []int) (int, error) {
	for i, l := range lens {
		m.iov[i].Len = uint64(l)
	}
	sent := 0
	for sent < len(lens) {
		n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(m.p.fd()), uintptr(unsafe.Pointer(&m.msgs[sent])), uintptr(len(lens)-sent), 0, 0, 0)
		if e != 0 {
			if e == unix.EINTR || e == unix.ENOBUFS || e == unix.EAGAIN {
				continue
			}
			return sent, fmt.Errorf("sendmmsg: %w", os.NewSyscallError("sendmmsg", e))
		}
		sent += int(n)
	}
	return sent, nil
}

// Close closes the socket; it is idempotent.
func (m *Mmsg) Close() error { return m.p.close() }
