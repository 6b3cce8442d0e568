package header

import "encoding/binary"

// Header lengths in bytes.
const (
	EthernetLen = 14 // destination, source, EtherType
	VLANLen     = 4  // 802.1Q tag: TCI and the inner EtherType
	IPv4MinLen  = 20 // IPv4 header without options
	IPv6Len     = 40 // IPv6 fixed header
	UDPLen      = 8
	TCPMinLen   = 20 // TCP header without options
	ICMPEchoLen = 8  // ICMPv4/ICMPv6 echo: type, code, checksum, identifier, sequence
	ARPLen      = 28 // ARP for Ethernet and IPv4
)

// EtherTypes.
const (
	EtherTypeIPv4  uint16 = 0x0800
	EtherTypeARP   uint16 = 0x0806
	EtherTypeVLAN  uint16 = 0x8100 // 802.1Q customer tag
	EtherTypeQinQ  uint16 = 0x88a8 // 802.1ad service tag
	EtherTypeIPv6  uint16 = 0x86dd
	EtherTypeLocal uint16 = 0x88b5 // IEEE 802 local experimental
)

// IP protocol numbers.
const (
	ProtoICMPv4 uint8 = 1
	ProtoTCP    uint8 = 6
	ProtoUDP    uint8 = 17
	ProtoICMPv6 uint8 = 58
)

// Ethernet is a view of an Ethernet II header.
type Ethernet []byte

// Dst returns the destination MAC address.
func (e Ethernet) Dst() []byte { return e[0:6] }

// Src returns the source MAC address.
func (e Ethernet) Src() []byte { return e[6:12] }

// Type returns the EtherType.
func (e Ethernet) Type() uint16 { return binary.BigEndian.Uint16(e[12:]) }

// SetDst sets the destination MAC address.
func (e Ethernet) SetDst(mac []byte) { copy(e[0:6], mac) }

// SetSrc sets the source MAC address.
func (e Ethernet) SetSrc(mac []byte) { copy(e[6:12], mac) }

// SetType sets the EtherType.
func (e Ethernet) SetType(t uint16) { binary.BigEndian.PutUint16(e[12:], t) }

// VLAN is a view of an 802.1Q tag as it follows the EtherType that announced
// it: the tag control information (TCI) and the next EtherType.
type VLAN []byte

// TCI returns the tag control information (PCP, DEI, VLAN id).
func (v VLAN) TCI() uint16 { return binary.BigEndian.Uint16(v[0:]) }

// ID returns the 12-bit VLAN identifier.
func (v VLAN) ID() uint16 { return v.TCI() & 0x0fff }

// PCP returns the 3-bit priority code point.
func (v VLAN) PCP() uint8 { return uint8(v.TCI() >> 13) }

// DEI returns the drop eligible indicator.
func (v VLAN) DEI() bool { return v.TCI()&0x1000 != 0 }

// Type returns the EtherType that follows the tag.
func (v VLAN) Type() uint16 { return binary.BigEndian.Uint16(v[2:]) }

// SetTCI sets PCP, DEI and VLAN id at once.
func (v VLAN) SetTCI(pcp uint8, dei bool, id uint16) {
	t := uint16(pcp&7)<<13 | id&0x0fff
	if dei {
		t |= 0x1000
	}
	binary.BigEndian.PutUint16(v[0:], t)
}

// SetType sets the EtherType that follows the tag.
func (v VLAN) SetType(t uint16) { binary.BigEndian.PutUint16(v[2:], t) }

// IPv4 is a view of an IPv4 header.
type IPv4 []byte

// IHL returns the header length in bytes.
func (h IPv4) IHL() int { return int(h[0]&0x0f) * 4 }

// DSCP returns the differentiated services code point.
func (h IPv4) DSCP() uint8 { return h[1] >> 2 }

// ECN returns the explicit congestion notification bits.
func (h IPv4) ECN() uint8 { return h[1] & 3 }

// TotalLength returns the length of header and payload.
func (h IPv4) TotalLength() uint16 { return binary.BigEndian.Uint16(h[2:]) }

// ID returns the identification field.
func (h IPv4) ID() uint16 { return binary.BigEndian.Uint16(h[4:]) }

// DontFragment reports whether the DF flag is set.
func (h IPv4) DontFragment() bool { return h[6]&0x40 != 0 }

// TTL returns the time to live.
func (h IPv4) TTL() uint8 { return h[8] }

// Protocol returns the upper-layer protocol number.
func (h IPv4) Protocol() uint8 { return h[9] }

// Checksum returns the header checksum.
func (h IPv4) Checksum() uint16 { return binary.BigEndian.Uint16(h[10:]) }

// Src returns the source address.
func (h IPv4) Src() []byte { return h[12:16] }

// Dst returns the destination address.
func (h IPv4) Dst() []byte { return h[16:20] }

// Init writes version 4 and an IHL of 5 (no options) and clears the fragment fields.
func (h IPv4) Init() {
	h[0] = 0x45
	h[6], h[7] = 0, 0
}

// SetTOS sets DSCP and ECN.
func (h IPv4) SetTOS(dscp, ecn uint8) { h[1] = dscp<<2 | ecn&3 }

// SetTotalLength sets the total length.
func (h IPv4) SetTotalLength(n uint16) { binary.BigEndian.PutUint16(h[2:], n) }

// SetID sets the identification field.
func (h IPv4) SetID(id uint16) { binary.BigEndian.PutUint16(h[4:], id) }

// SetDontFragment sets or clears the DF flag.
func (h IPv4) SetDontFragment(df bool) {
	if df {
		h[6] |= 0x40
	} else {
		h[6] &^= 0x40
	}
}

// SetTTL sets the time to live.
func (h IPv4) SetTTL(ttl uint8) { h[8] = ttl }

// SetProtocol sets the upper-layer protocol number.
func (h IPv4) SetProtocol(p uint8) { h[9] = p }

// SetChecksum stores a header checksum.
func (h IPv4) SetChecksum(c uint16) { binary.BigEndian.PutUint16(h[10:], c) }

// SetSrc sets the source address (4 bytes).
func (h IPv4) SetSrc(a []byte) { copy(h[12:16], a) }

// SetDst sets the destination address (4 bytes).
func (h IPv4) SetDst(a []byte) { copy(h[16:20], a) }

// CalculateChecksum computes the header checksum over IHL bytes (with the
// checksum field taken as zero) and returns it without storing it.
func (h IPv4) CalculateChecksum() uint16 {
	n := h.IHL()
	s := Sum(h[:10], 0)
	s = Sum(h[12:n], s)
	return ^Fold(s)
}

// PseudoSum returns the pseudo-header sum for an upper layer of length n.
func (h IPv4) PseudoSum(n int) uint64 {
	return PseudoSumIPv4(h.Src(), h.Dst(), h.Protocol(), n)
}

// IPv6 is a view of an IPv6 fixed header.
type IPv6 []byte

// TrafficClass returns the traffic class (DSCP << 2 | ECN).
func (h IPv6) TrafficClass() uint8 { return uint8(binary.BigEndian.Uint16(h[0:]) >> 4) }

// FlowLabel returns the 20-bit flow label.
func (h IPv6) FlowLabel() uint32 { return binary.BigEndian.Uint32(h[0:]) & 0xfffff }

// PayloadLength returns the length after the fixed header.
func (h IPv6) PayloadLength() uint16 { return binary.BigEndian.Uint16(h[4:]) }

// NextHeader returns the next header's protocol number.
func (h IPv6) NextHeader() uint8 { return h[6] }

// HopLimit returns the hop limit.
func (h IPv6) HopLimit() uint8 { return h[7] }

// Src returns the source address.
func (h IPv6) Src() []byte { return h[8:24] }

// Dst returns the destination address.
func (h IPv6) Dst() []byte { return h[24:40] }

// SetVersionClassFlow writes version 6, the traffic class and the flow label.
func (h IPv6) SetVersionClassFlow(tc uint8, flow uint32) {
	binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(tc)<<20|flow&0xfffff)
}

// SetPayloadLength sets the payload length.
func (h IPv6) SetPayloadLength(n uint16) { binary.BigEndian.PutUint16(h[4:], n) }

// SetNextHeader sets the next header's protocol number.
func (h IPv6) SetNextHeader(p uint8) { h[6] = p }

// SetHopLimit sets the hop limit.
func (h IPv6) SetHopLimit(l uint8) { h[7] = l }

// SetSrc sets the source address (16 bytes).
func (h IPv6) SetSrc(a []byte) { copy(h[8:24], a) }

// SetDst sets the destination address (16 bytes).
func (h IPv6) SetDst(a []byte) { copy(h[24:40], a) }

// PseudoSum returns the pseudo-header sum for an upper layer of length n
// and protocol proto.
func (h IPv6) PseudoSum(proto uint8, n int) uint64 {
	return PseudoSumIPv6(h.Src(), h.Dst(), proto, n)
}

// UDP is a view of a UDP header.
type UDP []byte

// SrcPort returns the source port.
func (u UDP) SrcPort() uint16 { return binary.BigEndian.Uint16(u[0:]) }

// DstPort returns the destination port.
func (u UDP) DstPort() uint16 { return binary.BigEndian.Uint16(u[2:]) }

// Length returns the length of header and payload.
func (u UDP) Length() uint16 { return binary.BigEndian.Uint16(u[4:]) }

// Checksum returns the checksum field.
func (u UDP) Checksum() uint16 { return binary.BigEndian.Uint16(u[6:]) }

// SetSrcPort sets the source port.
func (u UDP) SetSrcPort(p uint16) { binary.BigEndian.PutUint16(u[0:], p) }

// SetDstPort sets the destination port.
func (u UDP) SetDstPort(p uint16) { binary.BigEndian.PutUint16(u[2:], p) }

// SetLength sets the length field.
func (u UDP) SetLength(n uint16) { binary.BigEndian.PutUint16(u[4:], n) }

// SetChecksum stores a checksum; a computed 0 is sent as 0xffff (RFC 768),
// since 0 means "no checksum".
func (u UDP) SetChecksum(c uint16) {
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(u[6:], c)
}

// CalculateChecksum computes the checksum of the datagram u (header and
// payload, u's length being the UDP length) given the pseudo-header sum,
// with the checksum field taken as zero.
func (u UDP) CalculateChecksum(pseudo uint64) uint16 {
	s := Sum(u[:6], pseudo)
	s = Sum(u[8:], s)
	c := ^Fold(s)
	if c == 0 {
		c = 0xffff
	}
	return c
}

// TCP flag bits.
const (
	TCPFin uint8 = 0x01
	TCPSyn uint8 = 0x02
	TCPRst uint8 = 0x04
	TCPPsh uint8 = 0x08
	TCPAck uint8 = 0x10
	TCPUrg uint8 = 0x20
	TCPEce uint8 = 0x40
	TCPCwr uint8 = 0x80
)

// TCP is a view of a TCP header.
type TCP []byte

// SrcPort returns the source port.
func (t TCP) SrcPort() uint16 { return binary.BigEndian.Uint16(t[0:]) }

// DstPort returns the destination port.
func (t TCP) DstPort() uint16 { return binary.BigEndian.Uint16(t[2:]) }

// Seq returns the sequence number.
func (t TCP) Seq() uint32 { return binary.BigEndian.Uint32(t[4:]) }

// Ack returns the acknowledgment number.
func (t TCP) Ack() uint32 { return binary.BigEndian.Uint32(t[8:]) }

// DataOffset returns the header length in bytes.
func (t TCP) DataOffset() int { return int(t[12]>>4) * 4 }

// Flags returns the flag bits (TCPFin … TCPCwr).
func (t TCP) Flags() uint8 { return t[13] }

// Window returns the receive window.
func (t TCP) Window() uint16 { return binary.BigEndian.Uint16(t[14:]) }

// Checksum returns the checksum field.
func (t TCP) Checksum() uint16 { return binary.BigEndian.Uint16(t[16:]) }

// Urgent returns the urgent pointer.
func (t TCP) Urgent() uint16 { return binary.BigEndian.Uint16(t[18:]) }

// SetSrcPort sets the source port.
func (t TCP) SetSrcPort(p uint16) { binary.BigEndian.PutUint16(t[0:], p) }

// SetDstPort sets the destination port.
func (t TCP) SetDstPort(p uint16) { binary.BigEndian.PutUint16(t[2:], p) }

// SetSeq sets the sequence number.
func (t TCP) SetSeq(n uint32) { binary.BigEndian.PutUint32(t[4:], n) }

// SetAck sets the acknowledgment number.
func (t TCP) SetAck(n uint32) { binary.BigEndian.PutUint32(t[8:], n) }

// SetDataOffset sets the header length in bytes (a multiple of 4).
func (t TCP) SetDataOffset(n int) { t[12] = uint8(n/4) << 4 }

// SetFlags sets the flag bits.
func (t TCP) SetFlags(f uint8) { t[13] = f }

// SetWindow sets the receive window.
func (t TCP) SetWindow(w uint16) { binary.BigEndian.PutUint16(t[14:], w) }

// SetChecksum stores a checksum.
func (t TCP) SetChecksum(c uint16) { binary.BigEndian.PutUint16(t[16:], c) }

// SetUrgent sets the urgent pointer.
func (t TCP) SetUrgent(p uint16) { binary.BigEndian.PutUint16(t[18:], p) }

// CalculateChecksum computes the checksum of the segment t (header and
// payload) given the pseudo-header sum, with the checksum field taken as zero.
func (t TCP) CalculateChecksum(pseudo uint64) uint16 {
	s := Sum(t[:16], pseudo)
	s = Sum(t[18:], s)
	return ^Fold(s)
}

// ICMP types of the echo messages.
const (
	ICMPv4EchoReply   uint8 = 0
	ICMPv4EchoRequest uint8 = 8
	ICMPv6EchoRequest uint8 = 128
	ICMPv6EchoReply   uint8 = 129
)

// ICMP is a view of an ICMPv4 or ICMPv6 echo header.
type ICMP []byte

// Type returns the message type.
func (i ICMP) Type() uint8 { return i[0] }

// Code returns the message code.
func (i ICMP) Code() uint8 { return i[1] }

// Checksum returns the checksum field.
func (i ICMP) Checksum() uint16 { return binary.BigEndian.Uint16(i[2:]) }

// Ident returns the echo identifier.
func (i ICMP) Ident() uint16 { return binary.BigEndian.Uint16(i[4:]) }

// Seq returns the echo sequence number.
func (i ICMP) Seq() uint16 { return binary.BigEndian.Uint16(i[6:]) }

// SetTypeCode sets type and code.
func (i ICMP) SetTypeCode(typ, code uint8) { i[0], i[1] = typ, code }

// SetChecksum stores a checksum.
func (i ICMP) SetChecksum(c uint16) { binary.BigEndian.PutUint16(i[2:], c) }

// SetIdent sets the echo identifier.
func (i ICMP) SetIdent(id uint16) { binary.BigEndian.PutUint16(i[4:], id) }

// SetSeq sets the echo sequence number.
func (i ICMP) SetSeq(s uint16) { binary.BigEndian.PutUint16(i[6:], s) }

// CalculateChecksum computes the checksum of the message i (header and
// data). pseudo is 0 for ICMPv4 and the IPv6 pseudo-header sum for ICMPv6.
func (i ICMP) CalculateChecksum(pseudo uint64) uint16 {
	s := Sum(i[:2], pseudo)
	s = Sum(i[4:], s)
	return ^Fold(s)
}

// ARP operations.
const (
	ARPRequest uint16 = 1
	ARPReply   uint16 = 2
)

// ARP is a view of an ARP packet for Ethernet and IPv4.
type ARP []byte

// Init writes hardware type Ethernet (1), protocol type IPv4 and the
// address lengths 6 and 4.
func (a ARP) Init() {
	binary.BigEndian.PutUint16(a[0:], 1)
	binary.BigEndian.PutUint16(a[2:], EtherTypeIPv4)
	a[4], a[5] = 6, 4
}

// Op returns the operation (ARPRequest, ARPReply).
func (a ARP) Op() uint16 { return binary.BigEndian.Uint16(a[6:]) }

// SHA returns the sender hardware address.
func (a ARP) SHA() []byte { return a[8:14] }

// SPA returns the sender protocol address.
func (a ARP) SPA() []byte { return a[14:18] }

// THA returns the target hardware address.
func (a ARP) THA() []byte { return a[18:24] }

// TPA returns the target protocol address.
func (a ARP) TPA() []byte { return a[24:28] }

// SetOp sets the operation.
func (a ARP) SetOp(op uint16) { binary.BigEndian.PutUint16(a[6:], op) }

// SetSHA sets the sender hardware address.
func (a ARP) SetSHA(mac []byte) { copy(a[8:14], mac) }

// SetSPA sets the sender protocol address.
func (a ARP) SetSPA(ip []byte) { copy(a[14:18], ip) }

// SetTHA sets the target hardware address.
func (a ARP) SetTHA(mac []byte) { copy(a[18:24], mac) }

// SetTPA sets the target protocol address.
func (a ARP) SetTPA(ip []byte) { copy(a[24:28], ip) }
