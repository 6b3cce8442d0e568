//go:build linux

package tpacket

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/sys"
)

// AF_PACKET: TPACKET_V3 TX and RX rings and sendmmsg, see the kernel's
// Documentation/networking/packet_mmap.rst. TX on TPACKET_V3 needs Linux
// 4.11; PACKET_IGNORE_OUTGOING needs 4.20; PACKET_QDISC_BYPASS 3.14.

// TPacket3HdrLen is the offset of frame data in a TPACKET_V3 TX slot
// (TPACKET_ALIGN(sizeof(struct tpacket3_hdr))).
const TPacket3HdrLen = 48

// Offsets in struct tpacket3_hdr.
const (
	tp3NextOffset = 0
	tp3Sec        = 4
	tp3Nsec       = 8
	tp3Snaplen    = 12
	tp3Len        = 16
	tp3Status     = 20
	tp3Mac        = 24
	tp3VlanTCI    = 32 // hv1.tp_vlan_tci (host order)
	tp3VlanTPID   = 36 // hv1.tp_vlan_tpid (host order)
)

// sllLen is the size of the struct sockaddr_ll after a ring header.
const sllLen = 20

// vlanTPID returns the tag's EtherType from the status word and the
// kernel's tpid field (802.1Q when the kernel does not say).
func vlanTPID(status uint32, tpid uint16) uint16 {
	if status&unix.TP_STATUS_VLAN_TPID_VALID != 0 && tpid != 0 {
		return tpid
	}
	return header.EtherTypeVLAN
}

// Offsets in struct tpacket_block_desc (version, offset_to_priv, then
// struct tpacket_hdr_v1).
const (
	bdStatus     = 8
	bdNumPkts    = 12
	bdFirstPkt   = 16
	sllPkttype   = 10 // sockaddr_ll.sll_pkttype
	sllAfterHdr3 = 48 // sockaddr_ll follows the aligned tpacket3_hdr
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// packetFD owns one AF_PACKET socket and its ring mapping; mem is the
// hot path's copy of the mapping's bytes.
type packetFD struct {
	own  sys.FD
	ring *sys.Mapping
	mem  []byte
}

// fd is the socket's descriptor (-1 once closed).
func (p *packetFD) fd() int { return p.own.Int() }

func (p *packetFD) close() error {
	err := p.ring.Close()
	p.ring, p.mem = nil, nil
	if cerr := p.own.Close(); err == nil {
		err = cerr
	}
	return err
}

func openPacket(what string) (*packetFD, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: socket(AF_PACKET, SOCK_RAW): %w", what, os.NewSyscallError("socket", err))
	}
	return &packetFD{own: sys.OwnFD(fd)}, nil
}

func (p *packetFD) setInt(opt, v int, name string) error {
	if err := unix.SetsockoptInt(p.fd(), unix.SOL_PACKET, opt, v); err != nil {
		return fmt.Errorf("setsockopt(%s=%d): %w", name, v, os.NewSyscallError("setsockopt", err))
	}
	return nil
}

// awaitInput polls fds (this socket, POLLIN|POLLERR) for up to timeout
// (rounded up to a millisecond) and returns the socket's pending error,
// such as the device going down or away (ENETDOWN, ENXIO).
func (p *packetFD) awaitInput(fds []unix.PollFd, timeout time.Duration, what string) error {
	ms := int(timeout.Milliseconds())
	if timeout > 0 && ms == 0 {
		ms = 1
	}
	if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
		return fmt.Errorf("poll %s: %w", what, os.NewSyscallError("poll", err))
	}
	if fds[0].Revents&unix.POLLERR != 0 {
		serr, err := unix.GetsockoptInt(p.fd(), unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && serr != 0 {
			return fmt.Errorf("%s: %w", what, os.NewSyscallError("recv", unix.Errno(serr)))
		}
	}
	return nil
}

func (p *packetFD) bind(ifindex int, proto uint16) error {
	sa := &unix.SockaddrLinklayer{Protocol: htons(proto), Ifindex: ifindex}
	if err := unix.Bind(p.fd(), sa); err != nil {
		return fmt.Errorf("bind to ifindex %d: %w", ifindex, os.NewSyscallError("bind", err))
	}
	return nil
}

// mapRing maps size bytes of the socket's rings and, when lock is set,
// mlocks them (charged to RLIMIT_MEMLOCK unless CAP_IPC_LOCK).
func (p *packetFD) mapRing(size int, lock bool) error {
	m, err := sys.MapFile(p.fd(), size, true, true, "ring")
	if err != nil {
		return err
	}
	p.ring, p.mem = m, m.Bytes()
	if lock {
		return m.Lock()
	}
	return nil
}

// Feature names an AF_PACKET capability Probe can test.
type Feature int

// AF_PACKET features.
const (
	FeatureTxRingV3 Feature = iota
	FeatureQdiscBypass
	FeatureIgnoreOutgoing
	FeatureVnetHdr
)

// Probe tests one AF_PACKET feature on a throw-away socket (bound
// to nothing, sending nothing). The error is nil when the feature works;
// it is a permission error when the socket cannot be opened.
func Probe(f Feature) error {
	p, err := openPacket("probe")
	if err != nil {
		return err
	}
	defer p.close()
	switch f {
	case FeatureTxRingV3:
		if err := p.setInt(unix.PACKET_VERSION, unix.TPACKET_V3, "PACKET_VERSION"); err != nil {
			return err
		}
		req := unix.TpacketReq3{Block_size: uint32(os.Getpagesize()), Block_nr: 1, Frame_size: 128, Frame_nr: uint32(os.Getpagesize() / 128)}
		if err := unix.SetsockoptTpacketReq3(p.fd(), unix.SOL_PACKET, unix.PACKET_TX_RING, &req); err != nil {
			return fmt.Errorf("setsockopt(PACKET_TX_RING, TPACKET_V3): %w", os.NewSyscallError("setsockopt", err))
		}
		return nil
	case FeatureQdiscBypass:
		return p.setInt(unix.PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS")
	case FeatureIgnoreOutgoing:
		return p.setInt(unix.PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING")
	case FeatureVnetHdr:
		return p.setInt(unix.PACKET_VNET_HDR, 1, "PACKET_VNET_HDR")
	}
	return fmt.Errorf("probe: unknown AF_PACKET feature %d", f)
}
