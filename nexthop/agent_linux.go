//go:build linux

package nexthop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/mdlayher/packet"
	"golang.org/x/net/bpf"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/internal/sys"
)

// ndFilter passes Neighbor Solicitations and Advertisements only (an
// IPv6 socket on a port also sees the run's own IPv6 frames): next
// header ICMPv6 (byte 20 of an untagged frame), ICMPv6 type Neighbor
// Solicitation or Advertisement (byte 54).
var ndFilter = []bpf.Instruction{
	bpf.LoadAbsolute{Off: header.EthernetLen + header.IPv6NextHeaderOffset, Size: 1},
	bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(header.ProtoICMPv6), SkipTrue: 4},
	bpf.LoadAbsolute{Off: header.EthernetLen + header.IPv6Len + header.ICMPTypeOffset, Size: 1},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(header.ICMPv6NeighborSolicit), SkipTrue: 1},
	bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(header.ICMPv6NeighborAdvert), SkipTrue: 1},
	bpf.RetConstant{Val: 0xffff},
	bpf.RetConstant{Val: 0},
}

// Open opens the agent of port on the interface named iface, in the
// network namespace of the calling thread, and starts answering for the
// port's address (unless the kernel holds it there). It needs CAP_NET_RAW.
func Open(iface string, port Port, o Options) (*Agent, error) {
	if !port.Addr.IsValid() {
		return nil, errors.New("nexthop: the port has no address")
	}
	ifi, err := backend.UpInterface("port", iface)
	if err != nil {
		return nil, err
	}
	if len(ifi.HardwareAddr) != 6 {
		return nil, fmt.Errorf("port %s: not an Ethernet interface (hardware address %q): ARP and Neighbor Discovery need one", iface, ifi.HardwareAddr)
	}
	for _, t := range o.Tags {
		if !header.IsVLAN(t.TPID) && t.TPID != header.EtherTypeQinQ9100 || t.ID > 4094 {
			return nil, fmt.Errorf("port %s: VLAN tag %s: give a TPID of 0x8100, 0x88a8 or 0x9100 and an id of 0 to 4094", iface, t)
		}
	}
	if len(o.Tags) > header.MaxVLANTags {
		return nil, fmt.Errorf("port %s: %d VLAN tags (%s): at most %d", iface, len(o.Tags), FormatTags(o.Tags), header.MaxVLANTags)
	}
	a := &Agent{iface: iface, mac: ifi.HardwareAddr, port: port, timeout: o.Timeout, tags: append([]Tag(nil), o.Tags...), done: make(chan struct{})}
	if a.timeout <= 0 {
		a.timeout = DefaultTimeout
	}
	// An address the kernel holds on the interface is its to answer,
	// untagged; tagged requests are the agent's.
	a.kernel = len(a.tags) == 0 && kernelHolds(ifi, port.Addr.Addr())
	// The EtherType the socket is bound to.
	proto, cfg := int(header.EtherTypeARP), (*packet.Config)(nil)
	switch {
	case len(a.tags) > 0:
		// A socket bound to an EtherType sees no tagged frame whole: the
		// kernel takes the outer tag out (into the frame's metadata) and,
		// for a VLAN it has no interface of, clears it before such a
		// socket sees the frame. A socket of all the port's frames sees
		// the tag; its filter keeps the neighbour messages of the port's
		// tag stack.
		f, err := bpf.Assemble(tagFilter(a.tags, port.Is4()))
		if err != nil {
			return nil, err
		}
		proto, cfg = ethPAll, &packet.Config{Filter: f}
	case !port.Is4():
		f, err := bpf.Assemble(ndFilter)
		if err != nil {
			return nil, err
		}
		proto, cfg = int(header.EtherTypeIPv6), &packet.Config{Filter: f}
	}
	c, err := packet.Listen(ifi, packet.Raw, proto, cfg)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, inputerr.WithFix(fmt.Errorf("port %s: %s needs CAP_NET_RAW: %w", iface, port.Proto(), err), "run as root, or grant wpg cap_net_raw")
		}
		return nil, fmt.Errorf("port %s: opening a packet socket for %s: %w", iface, port.Proto(), err)
	}
	if len(a.tags) > 0 {
		// The run's frames leaving the port need not pass the filter
		// (a copy of each, on a fast port): the socket ignores what the
		// host sends.
		if err := ignoreOutgoing(c); err != nil {
			c.Close()
			return nil, fmt.Errorf("port %s: %w", iface, err)
		}
	}
	if !port.Is4() && !a.kernel {
		// Solicitations for the port's address go to its solicited-node
		// group, which a NIC filters out unless the kernel joined it
		// (it did not: the address is not the kernel's). Promiscuous
		// mode lasts as long as the socket.
		if err := c.SetPromiscuous(true); err != nil {
			c.Close()
			return nil, fmt.Errorf("port %s: promiscuous mode for Neighbor Discovery: %w", iface, err)
		}
	}
	a.conn = packetConn{c}
	go a.serve()
	return a, nil
}

// ethPAll is ETH_P_ALL: a packet socket of every protocol.
const ethPAll = 0x0003

// ignoreOutgoing sets PACKET_IGNORE_OUTGOING on c; a kernel older than
// 4.20 does not know it, and its socket filter drops them instead.
func ignoreOutgoing(c *packet.Conn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	if err := sys.SetsockoptInt(rc, sys.SolPacket, sys.PacketIgnoreOutgoing, 1); err != nil && !errors.Is(err, syscall.ENOPROTOOPT) {
		return fmt.Errorf("PACKET_IGNORE_OUTGOING: %w", err)
	}
	return nil
}

// kernelHolds reports whether the kernel holds addr on ifi.
func kernelHolds(ifi *net.Interface, addr interface{ String() string }) bool {
	addrs, err := ifi.Addrs()
	if err != nil {
		return false
	}
	for _, x := range addrs {
		if ipn, ok := x.(*net.IPNet); ok && ipn.IP.String() == addr.String() {
			return true
		}
	}
	return false
}

// packetConn is an AF_PACKET socket as the agent's link.
type packetConn struct{ c *packet.Conn }

func (p packetConn) read(b []byte) (int, error) {
	n, _, err := p.c.ReadFrom(b)
	return n, err
}

func (p packetConn) write(b []byte) error {
	if err := p.c.SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	_, err := p.c.WriteTo(b, &packet.Addr{HardwareAddr: net.HardwareAddr(b[0:6])})
	return err
}

func (p packetConn) Close() error { return p.c.Close() }
