package header

import "encoding/binary"

// IPv6Len is the length of the IPv6 fixed header.
const IPv6Len = 40

// EtherTypeIPv6 is the EtherType of IPv6.
const EtherTypeIPv6 uint16 = 0x86dd

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
