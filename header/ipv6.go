package header

import "encoding/binary"

// IPv6Len is the length of the IPv6 fixed header.
const IPv6Len = 40

// EtherTypeIPv6 is the EtherType of IPv6.
const EtherTypeIPv6 uint16 = 0x86dd

// Offsets in the IPv6 fixed header.
const (
	ipv6VersClassFlow = 0 // version (4 bits), traffic class (8), flow label (20)
	ipv6PayloadLen    = 4
	// IPv6NextHeaderOffset is the offset of the next header field, for
	// code that reads it without a view (a socket filter).
	IPv6NextHeaderOffset = 6
	ipv6HopLimit         = 7
	ipv6Src              = 8
	ipv6Dst              = 24
	ipv6AddrLen          = 16
	ipv6FlowLabel        = 0xfffff
)

// IPv6 extension headers (next header values) that SkipIPv6Extensions
// walks, and the fragment header.
const (
	ProtoIPv6HopByHop uint8 = 0
	ProtoIPv6Routing  uint8 = 43
	ProtoIPv6Fragment uint8 = 44
	ProtoIPv6DstOpts  uint8 = 60
)

// IPv6FragmentLen is the length of the IPv6 fragment header.
const IPv6FragmentLen = 8

// Offsets in an IPv6 extension header (hop-by-hop, routing, destination
// options: its length in 8-byte units after the first 8) and in the
// fragment header.
const (
	ipv6ExtNext    = 0
	ipv6ExtLen     = 1
	ipv6ExtMinLen  = 8
	ipv6FragOffset = 2 // fragment offset (13 bits, 8-byte units), 2 reserved bits, M
	ipv6FragMore   = 1
)

// IPv6 is a view of an IPv6 fixed header.
type IPv6 []byte

// TrafficClass returns the traffic class (DSCP << 2 | ECN).
func (h IPv6) TrafficClass() uint8 {
	return uint8(binary.BigEndian.Uint16(h[ipv6VersClassFlow:]) >> 4)
}

// FlowLabel returns the 20-bit flow label.
func (h IPv6) FlowLabel() uint32 {
	return binary.BigEndian.Uint32(h[ipv6VersClassFlow:]) & ipv6FlowLabel
}

// PayloadLength returns the length after the fixed header.
func (h IPv6) PayloadLength() uint16 { return binary.BigEndian.Uint16(h[ipv6PayloadLen:]) }

// NextHeader returns the next header's protocol number.
func (h IPv6) NextHeader() uint8 { return h[IPv6NextHeaderOffset] }

// HopLimit returns the hop limit.
func (h IPv6) HopLimit() uint8 { return h[ipv6HopLimit] }

// Src returns the source address.
func (h IPv6) Src() []byte { return h[ipv6Src : ipv6Src+ipv6AddrLen] }

// Dst returns the destination address.
func (h IPv6) Dst() []byte { return h[ipv6Dst : ipv6Dst+ipv6AddrLen] }

// SetVersionClassFlow writes version 6, the traffic class and the flow label.
func (h IPv6) SetVersionClassFlow(tc uint8, flow uint32) {
	binary.BigEndian.PutUint32(h[ipv6VersClassFlow:], 6<<28|uint32(tc)<<20|flow&ipv6FlowLabel)
}

// SetPayloadLength sets the payload length.
func (h IPv6) SetPayloadLength(n uint16) { binary.BigEndian.PutUint16(h[ipv6PayloadLen:], n) }

// SetNextHeader sets the next header's protocol number.
func (h IPv6) SetNextHeader(p uint8) { h[IPv6NextHeaderOffset] = p }

// SetHopLimit sets the hop limit.
func (h IPv6) SetHopLimit(l uint8) { h[ipv6HopLimit] = l }

// SetSrc sets the source address (16 bytes).
func (h IPv6) SetSrc(a []byte) { copy(h[ipv6Src:ipv6Src+ipv6AddrLen], a) }

// SetDst sets the destination address (16 bytes).
func (h IPv6) SetDst(a []byte) { copy(h[ipv6Dst:ipv6Dst+ipv6AddrLen], a) }

// PseudoSum returns the pseudo-header sum for an upper layer of length n
// and protocol proto.
func (h IPv6) PseudoSum(proto uint8, n int) uint64 {
	return PseudoSumIPv6(h.Src(), h.Dst(), proto, n)
}

// SkipIPv6Extensions walks past the hop-by-hop, routing and destination
// options headers at the start of rest, next being the first one's next
// header value, and returns the header value after them and what follows
// them. ok is false when one of them is truncated.
func SkipIPv6Extensions(next uint8, rest []byte) (uint8, []byte, bool) {
	for next == ProtoIPv6HopByHop || next == ProtoIPv6Routing || next == ProtoIPv6DstOpts {
		if len(rest) < ipv6ExtMinLen {
			return next, rest, false
		}
		n := (int(rest[ipv6ExtLen]) + 1) * 8
		if n > len(rest) {
			return next, rest, false
		}
		next, rest = rest[ipv6ExtNext], rest[n:]
	}
	return next, rest, true
}

// IPv6Fragment is a view of an IPv6 fragment header.
type IPv6Fragment []byte

// FragmentOffset returns the fragment offset in 8-byte units.
func (f IPv6Fragment) FragmentOffset() uint16 {
	return binary.BigEndian.Uint16(f[ipv6FragOffset:]) >> 3
}

// MoreFragments reports whether the M flag is set.
func (f IPv6Fragment) MoreFragments() bool {
	return binary.BigEndian.Uint16(f[ipv6FragOffset:])&ipv6FragMore != 0
}
