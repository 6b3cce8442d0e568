package header

import "encoding/binary"

// IPv4MinLen is the length of an IPv4 header without options.
const IPv4MinLen = 20

// EtherTypeIPv4 is the EtherType of IPv4.
const EtherTypeIPv4 uint16 = 0x0800

// Offsets in an IPv4 header, and the bits of its flags and fragment
// offset word.
const (
	ipv4VersIHL   = 0
	ipv4TOS       = 1
	ipv4TotalLen  = 2
	ipv4ID        = 4
	ipv4FlagsFrag = 6 // flags (3 bits) and fragment offset (13 bits)
	ipv4TTL       = 8
	ipv4Protocol  = 9
	ipv4Checksum  = 10
	ipv4Src       = 12
	ipv4Dst       = 16
	ipv4AddrLen   = 4

	ipv4FlagDF     = 0x40 // in the byte at ipv4FlagsFrag
	ipv4FlagMF     = 0x2000
	ipv4FragOffset = 0x1fff // in 8-byte units
)

// IPv4 is a view of an IPv4 header.
type IPv4 []byte

// IPVersion returns the version field of the IPv4 or IPv6 header that
// begins at b (4 or 6 for a well-formed one).
func IPVersion(b []byte) uint8 { return b[ipv4VersIHL] >> 4 }

// IHL returns the header length in bytes.
func (h IPv4) IHL() int { return int(h[ipv4VersIHL]&0x0f) * 4 }

// DSCP returns the differentiated services code point.
func (h IPv4) DSCP() uint8 { return h[ipv4TOS] >> 2 }

// ECN returns the explicit congestion notification bits.
func (h IPv4) ECN() uint8 { return h[ipv4TOS] & 3 }

// TotalLength returns the length of header and payload.
func (h IPv4) TotalLength() uint16 { return binary.BigEndian.Uint16(h[ipv4TotalLen:]) }

// ID returns the identification field.
func (h IPv4) ID() uint16 { return binary.BigEndian.Uint16(h[ipv4ID:]) }

// DontFragment reports whether the DF flag is set.
func (h IPv4) DontFragment() bool { return h[ipv4FlagsFrag]&ipv4FlagDF != 0 }

// MoreFragments reports whether the MF flag is set.
func (h IPv4) MoreFragments() bool {
	return binary.BigEndian.Uint16(h[ipv4FlagsFrag:])&ipv4FlagMF != 0
}

// FragmentOffset returns the fragment offset in 8-byte units.
func (h IPv4) FragmentOffset() uint16 {
	return binary.BigEndian.Uint16(h[ipv4FlagsFrag:]) & ipv4FragOffset
}

// TTL returns the time to live.
func (h IPv4) TTL() uint8 { return h[ipv4TTL] }

// Protocol returns the upper-layer protocol number.
func (h IPv4) Protocol() uint8 { return h[ipv4Protocol] }

// Checksum returns the header checksum.
func (h IPv4) Checksum() uint16 { return binary.BigEndian.Uint16(h[ipv4Checksum:]) }

// Src returns the source address.
func (h IPv4) Src() []byte { return h[ipv4Src : ipv4Src+ipv4AddrLen] }

// Dst returns the destination address.
func (h IPv4) Dst() []byte { return h[ipv4Dst : ipv4Dst+ipv4AddrLen] }

// Init writes version 4 and an IHL of 5 (no options) and clears the fragment fields.
func (h IPv4) Init() {
	h[ipv4VersIHL] = 0x45
	h[ipv4FlagsFrag], h[ipv4FlagsFrag+1] = 0, 0
}

// SetTOS sets DSCP and ECN.
func (h IPv4) SetTOS(dscp, ecn uint8) { h[ipv4TOS] = dscp<<2 | ecn&3 }

// SetTotalLength sets the total length.
func (h IPv4) SetTotalLength(n uint16) { binary.BigEndian.PutUint16(h[ipv4TotalLen:], n) }

// SetID sets the identification field.
func (h IPv4) SetID(id uint16) { binary.BigEndian.PutUint16(h[ipv4ID:], id) }

// SetDontFragment sets or clears the DF flag.
func (h IPv4) SetDontFragment(df bool) {
	if df {
		h[ipv4FlagsFrag] |= ipv4FlagDF
	} else {
		h[ipv4FlagsFrag] &^= ipv4FlagDF
	}
}

// SetTTL sets the time to live.
func (h IPv4) SetTTL(ttl uint8) { h[ipv4TTL] = ttl }

// SetProtocol sets the upper-layer protocol number.
func (h IPv4) SetProtocol(p uint8) { h[ipv4Protocol] = p }

// SetChecksum stores a header checksum.
func (h IPv4) SetChecksum(c uint16) { binary.BigEndian.PutUint16(h[ipv4Checksum:], c) }

// SetSrc sets the source address (4 bytes).
func (h IPv4) SetSrc(a []byte) { copy(h[ipv4Src:ipv4Src+ipv4AddrLen], a) }

// SetDst sets the destination address (4 bytes).
func (h IPv4) SetDst(a []byte) { copy(h[ipv4Dst:ipv4Dst+ipv4AddrLen], a) }

// CalculateChecksum computes the header checksum over IHL bytes (with the
// checksum field taken as zero) and returns it without storing it.
func (h IPv4) CalculateChecksum() uint16 {
	n := h.IHL()
	s := Sum(h[:ipv4Checksum], 0)
	s = Sum(h[ipv4Checksum+2:n], s)
	return ^Fold(s)
}

// PseudoSum returns the pseudo-header sum for an upper layer of length n.
func (h IPv4) PseudoSum(n int) uint64 {
	return PseudoSumIPv4(h.Src(), h.Dst(), h.Protocol(), n)
}
