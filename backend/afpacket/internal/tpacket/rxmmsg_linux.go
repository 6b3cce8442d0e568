//go:build linux

package tpacket

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/wpg-dev/wpg/header"
	"golang.org/x/sys/unix"
)

// MmsgRx is the receiving side without a ring: an AF_PACKET socket
// bound to one interface for every protocol (ETH_P_ALL), read with
// recvmmsg into its own buffers, each frame stamped by the kernel
// (SO_TIMESTAMPNS). It needs no locked memory: the frames wait in the
// socket's receive buffer instead of a mapped ring. Outgoing frames are
// not delivered, as with RxRing. Not safe for concurrent use.
type MmsgRx struct {
	p         packetFD
	slab      []byte
	bufs      [][]byte
	iov       []unix.Iovec
	msgs      []mmsghdr
	names     []unix.RawSockaddrLinklayer
	ctl       []byte // per message: SCM_TIMESTAMPNS and PACKET_AUXDATA
	ctlLen    int
	filterOut bool
	outgoing  uint64
	pollFds   []unix.PollFd
}

// NewMmsgRx opens the socket on ifindex with batch buffers of snap
// bytes each and asks for a receive buffer of rcvbuf bytes (forced past
// net.core.rmem_max where the process may). On error nothing is left open.
func NewMmsgRx(ifindex, batch, snap, rcvbuf int) (*MmsgRx, error) {
	if batch < 1 || snap < 64 {
		return nil, fmt.Errorf("recvmmsg socket: batch %d or snap length %d invalid", batch, snap)
	}
	p, err := openPacket("recvmmsg socket")
	if err != nil {
		return nil, err
	}
	m := &MmsgRx{p: *p}
	if err := m.setup(ifindex, batch, snap, rcvbuf); err != nil {
		m.p.close()
		return nil, err
	}
	return m, nil
}

func (m *MmsgRx) setup(ifindex, batch, snap, rcvbuf int) error {
	if err := m.p.setInt(unix.PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING"); err != nil {
		m.filterOut = true
	}
	if err := unix.SetsockoptInt(m.p.fd(), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf); err != nil {
		// Without CAP_NET_ADMIN: as much as net.core.rmem_max allows.
		_ = unix.SetsockoptInt(m.p.fd(), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf)
	}
	if err := unix.SetsockoptInt(m.p.fd(), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("setsockopt(SO_TIMESTAMPNS): %w", os.NewSyscallError("setsockopt", err))
	}
	// The VLAN tag the kernel takes out of a frame comes back in the
	// auxiliary data; Next puts it back into the frame.
	if err := m.p.setInt(unix.PACKET_AUXDATA, 1, "PACKET_AUXDATA"); err != nil {
		return err
	}
	// Each buffer keeps header.VLANLen bytes in front of the frame for the tag.
	stride := snap + header.VLANLen
	m.slab = make([]byte, batch*stride)
	m.bufs = make([][]byte, batch)
	m.iov = make([]unix.Iovec, batch)
	m.msgs = make([]mmsghdr, batch)
	m.names = make([]unix.RawSockaddrLinklayer, batch)
	m.ctlLen = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))) + unix.CmsgSpace(sizeofAuxdata)
	m.ctl = make([]byte, batch*m.ctlLen)
	for i := range batch {
		m.bufs[i] = m.slab[i*stride : (i+1)*stride : (i+1)*stride]
		m.iov[i] = unix.Iovec{Base: &m.bufs[i][header.VLANLen], Len: uint64(snap)}
		h := &m.msgs[i].hdr
		h.Iov, h.Iovlen = &m.iov[i], 1
		h.Name = (*byte)(unsafe.Pointer(&m.names[i]))
		h.Control = &m.ctl[i*m.ctlLen]
	}
	m.pollFds = []unix.PollFd{{Fd: int32(m.p.fd()), Events: unix.POLLIN | unix.POLLERR}}
	return m.p.bind(ifindex, unix.ETH_P_ALL)
}

// Next fills views with received frames (valid until the next call) and
// returns how many; it waits up to timeout for the first one. When ts is
// not nil (len(ts) >= len(views)) it receives each frame's kernel receive
// timestamp in CLOCK_REALTIME nanoseconds.
func (m *MmsgRx) Next(views [][]byte, ts []int64, timeout time.Duration) (int, error) {
	want := min(len(views), len(m.msgs))
	for waited := false; ; waited = true {
		for i := range want {
			h := &m.msgs[i].hdr
			h.Namelen = uint32(unsafe.Sizeof(m.names[i]))
			h.SetControllen(m.ctlLen)
			h.Flags = 0
		}
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(m.p.fd()), uintptr(unsafe.Pointer(&m.msgs[0])), uintptr(want), unix.MSG_DONTWAIT, 0, 0)
		switch {
		case e == 0:
			return m.views(int(r), views, ts), nil
		case e == unix.EINTR:
			continue
		case e != unix.EAGAIN:
			return 0, fmt.Errorf("recvmmsg: %w", os.NewSyscallError("recvmmsg", e))
		case waited:
			return 0, nil
		}
		if err := m.p.awaitInput(m.pollFds, timeout, "recvmmsg"); err != nil {
			return 0, err
		}
	}
}

// views hands out the r messages just received, dropping outgoing ones
// where the kernel could not (no PACKET_IGNORE_OUTGOING).
func (m *MmsgRx) views(r int, views [][]byte, ts []int64) int {
	n := 0
	for i := range r {
		if m.filterOut && m.names[i].Pkttype == unix.PACKET_OUTGOING {
			m.outgoing++
			continue
		}
		l := header.VLANLen + int(m.msgs[i].len)
		stamp, aux := m.control(i)
		start := header.VLANLen
		if aux != nil && aux.Status&unix.TP_STATUS_VLAN_VALID != 0 && l >= header.VLANLen+2*header.EthernetAddrLen {
			start = header.InsertVLAN(m.bufs[i], header.VLANLen, vlanTPID(aux.Status, aux.Vlan_tpid), aux.Vlan_tci)
		}
		views[n] = m.bufs[i][start:l:l]
		if ts != nil {
			ts[n] = stamp
		}
		n++
	}
	return n
}

// sizeofAuxdata is the size of struct tpacket_auxdata.
const sizeofAuxdata = int(unsafe.Sizeof(unix.TpacketAuxdata{}))

// control returns message i's SCM_TIMESTAMPNS (CLOCK_REALTIME ns, or 0) and
// its PACKET_AUXDATA (nil when absent).
func (m *MmsgRx) control(i int) (stamp int64, aux *unix.TpacketAuxdata) {
	c := m.ctl[i*m.ctlLen : (i+1)*m.ctlLen]
	c = c[:min(len(c), int(m.msgs[i].hdr.Controllen))]
	for len(c) >= unix.CmsgLen(0) {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
		hl := int(h.Len)
		if hl < unix.CmsgLen(0) || hl > len(c) {
			break
		}
		data := c[unix.CmsgLen(0):hl]
		switch {
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})):
			stamp = (*unix.Timespec)(unsafe.Pointer(&data[0])).Nano()
		case h.Level == unix.SOL_PACKET && h.Type == unix.PACKET_AUXDATA && len(data) >= sizeofAuxdata:
			aux = (*unix.TpacketAuxdata)(unsafe.Pointer(&data[0]))
		}
		c = c[min(len(c), unix.CmsgSpace(hl-unix.CmsgLen(0))):]
	}
	return stamp, aux
}

// Stats returns and resets the kernel's counters: packets seen and
// dropped for lack of receive-buffer room (PACKET_STATISTICS), plus the
// outgoing packets this process filtered itself.
func (m *MmsgRx) Stats() (packets, drops, outgoing uint64, err error) {
	st, err := unix.GetsockoptTpacketStats(m.p.fd(), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0, 0, m.outgoing, fmt.Errorf("getsockopt(PACKET_STATISTICS): %w", err)
	}
	return uint64(st.Packets), uint64(st.Drops), m.outgoing, nil
}

// Close closes the socket; it is idempotent.
func (m *MmsgRx) Close() error { return m.p.close() }
