package header

import "encoding/binary"

// IPv4MinLen is the length of an IPv4 header without options.
const IPv4MinLen = 20

// EtherTypeIPv4 is the EtherType of IPv4.
const EtherTypeIPv4 uint16 = 0x0800

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
