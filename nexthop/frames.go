package nexthop

import (
	"encoding/binary"
	"net"
	"net/netip"

	"github.com/mdlayher/arp"
	"github.com/mdlayher/ndp"

	"github.com/wpg-dev/wpg/header"
)

// kind is what a neighbour message asks or says.
type kind uint8

const (
	kindNone    kind = iota
	kindRequest      // ARP request, Neighbor Solicitation: who has Target?
	kindReply        // ARP reply, Neighbor Advertisement: Target is at MAC
)

// message is an ARP packet or a Neighbor Solicitation/Advertisement as
// far as resolving and answering needs it.
type message struct {
	kind kind
	// From is the frame's Ethernet source, Sender the sender's IP (the
	// unspecified address for a duplicate address detection probe).
	From   net.HardwareAddr
	Sender netip.Addr
	// Target is the address asked about (request) or announced (reply);
	// MAC is the link-layer address the message gives: the sender's for
	// a request, the target's for a reply (From when an advertisement
	// carries no option).
	Target netip.Addr
	MAC    net.HardwareAddr
}

var broadcast = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// ethernet prefixes body with an Ethernet header and the VLAN tags
// tags (outer first; none: untagged).
func ethernet(dst, src net.HardwareAddr, tags []Tag, typ uint16, body []byte) []byte {
	n := header.EthernetLen + len(tags)*header.VLANLen
	b := make([]byte, n+len(body))
	e := header.Ethernet(b)
	e.SetDst(dst)
	e.SetSrc(src)
	at := header.EtherTypeOffset
	for _, t := range tags {
		binary.BigEndian.PutUint16(b[at:], t.TPID)
		header.VLAN(b[at+2:]).SetTCI(0, false, t.ID)
		at += header.VLANLen
	}
	binary.BigEndian.PutUint16(b[at:], typ)
	copy(b[n:], body)
	return b
}

// arpFrame is an ARP packet in an Ethernet frame tagged tags: a
// broadcast request from mac/ip for target, or a reply to dstMAC/dstIP
// saying ip is at mac.
func arpFrame(tags []Tag, op arp.Operation, mac net.HardwareAddr, ip netip.Addr, dstMAC net.HardwareAddr, dstIP netip.Addr) ([]byte, error) {
	tha, edst := dstMAC, dstMAC
	if op == arp.OperationRequest {
		tha, edst = net.HardwareAddr{0, 0, 0, 0, 0, 0}, broadcast
	}
	p, err := arp.NewPacket(op, mac, ip, tha, dstIP)
	if err != nil {
		return nil, err
	}
	body, err := p.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return ethernet(edst, mac, tags, header.EtherTypeARP, body), nil
}

// ndFrame is an ICMPv6 neighbour message m from mac/src to dstMAC/dst in
// an IPv6 packet with hop limit 255 (RFC 4861 drops any other), in an
// Ethernet frame tagged tags.
func ndFrame(tags []Tag, m ndp.Message, mac net.HardwareAddr, src netip.Addr, dstMAC net.HardwareAddr, dst netip.Addr) ([]byte, error) {
	icmp, err := ndp.MarshalMessageChecksum(m, src, dst)
	if err != nil {
		return nil, err
	}
	body := make([]byte, header.IPv6Len+len(icmp))
	h := header.IPv6(body)
	h.SetVersionClassFlow(0, 0)
	h.SetPayloadLength(uint16(len(icmp)))
	h.SetNextHeader(header.ProtoICMPv6)
	h.SetHopLimit(ndp.HopLimit)
	s, d := src.As16(), dst.As16()
	h.SetSrc(s[:])
	h.SetDst(d[:])
	copy(body[header.IPv6Len:], icmp)
	return ethernet(dstMAC, mac, tags, header.EtherTypeIPv6, body), nil
}

// solicit is a Neighbor Solicitation from mac/src for target, to the
// target's solicited-node multicast group, tagged tags.
func solicit(tags []Tag, mac net.HardwareAddr, src, target netip.Addr) ([]byte, error) {
	group, err := ndp.SolicitedNodeMulticast(target)
	if err != nil {
		return nil, err
	}
	g := group.As16()
	dstMAC := net.HardwareAddr{0x33, 0x33, g[12], g[13], g[14], g[15]}
	m := &ndp.NeighborSolicitation{TargetAddress: target,
		Options: []ndp.Option{&ndp.LinkLayerAddress{Direction: ndp.Source, Addr: mac}}}
	return ndFrame(tags, m, mac, src, dstMAC, group)
}

// advertise answers a solicitation q for addr, at mac: to its sender, or
// to all nodes when q was a duplicate address probe (unspecified source);
// tagged tags.
func advertise(tags []Tag, mac net.HardwareAddr, addr netip.Addr, q message) ([]byte, error) {
	m := &ndp.NeighborAdvertisement{Solicited: true, Override: true, TargetAddress: addr,
		Options: []ndp.Option{&ndp.LinkLayerAddress{Direction: ndp.Target, Addr: mac}}}
	dst, dstMAC := q.Sender, q.MAC
	if !dst.IsValid() || dst.IsUnspecified() {
		m.Solicited = false
		dst, dstMAC = netip.IPv6LinkLocalAllNodes(), net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1}
	}
	if len(dstMAC) != 6 {
		dstMAC = q.From
	}
	return ndFrame(tags, m, mac, addr, dstMAC, dst)
}

// parse reads an Ethernet frame holding an ARP packet (for IPv4 over
// Ethernet) or a Neighbor Solicitation or Advertisement, after the VLAN
// tags it carries (the caller's socket filter chose them: tagFilter); ok
// is false for anything else.
func parse(b []byte) (m message, ok bool) {
	et, off, ok := header.SkipVLANs(b)
	if !ok {
		return m, false
	}
	m.From = net.HardwareAddr(append([]byte(nil), header.Ethernet(b).Src()...))
	body := b[off:]
	switch et {
	case header.EtherTypeARP:
		var p arp.Packet
		if p.UnmarshalBinary(body) != nil || p.ProtocolType != header.EtherTypeIPv4 || len(p.SenderHardwareAddr) != 6 {
			return m, false
		}
		switch p.Operation {
		case arp.OperationRequest:
			m.kind, m.MAC = kindRequest, p.SenderHardwareAddr
		case arp.OperationReply:
			m.kind, m.MAC = kindReply, p.SenderHardwareAddr
			// A reply says where its sender is.
			m.Sender, m.Target = p.SenderIP, p.SenderIP
			return m, true
		default:
			return m, false
		}
		m.Sender, m.Target = p.SenderIP, p.TargetIP
		return m, true
	case header.EtherTypeIPv6:
		if len(body) < header.IPv6Len {
			return m, false
		}
		h := header.IPv6(body)
		if h.NextHeader() != header.ProtoICMPv6 || h.HopLimit() != ndp.HopLimit {
			return m, false
		}
		n := header.IPv6Len + int(h.PayloadLength())
		if n > len(body) {
			return m, false
		}
		msg, err := ndp.ParseMessage(body[header.IPv6Len:n])
		if err != nil {
			return m, false
		}
		m.Sender = netip.AddrFrom16([16]byte(h.Src()))
		switch x := msg.(type) {
		case *ndp.NeighborSolicitation:
			m.kind, m.Target = kindRequest, x.TargetAddress
			m.MAC = lla(x.Options, ndp.Source)
		case *ndp.NeighborAdvertisement:
			m.kind, m.Target = kindReply, x.TargetAddress
			m.MAC = lla(x.Options, ndp.Target)
			if m.MAC == nil {
				m.MAC = m.From
			}
		default:
			return m, false
		}
		return m, true
	}
	return m, false
}

// lla is the link-layer address option of direction d, nil without one.
func lla(opts []ndp.Option, d ndp.Direction) net.HardwareAddr {
	for _, o := range opts {
		if l, ok := o.(*ndp.LinkLayerAddress); ok && l.Direction == d && len(l.Addr) == 6 {
			return l.Addr
		}
	}
	return nil
}
