package header

import "encoding/binary"

// ICMPEchoLen is the length of an ICMPv4 or ICMPv6 echo header: type,
// code, checksum, identifier, sequence.
const ICMPEchoLen = 8

// IP protocol numbers of ICMP.
const (
	ProtoICMPv4 uint8 = 1
	ProtoICMPv6 uint8 = 58
)

// ICMPv6MinLen is the length of the part every ICMPv6 message has: type,
// code, checksum.
const ICMPv6MinLen = 4

// Offsets in an ICMPv4 or ICMPv6 (echo) header.
const (
	// ICMPTypeOffset is the offset of the message type, for code that
	// reads it without a view (a socket filter).
	ICMPTypeOffset = 0
	icmpCode       = 1
	icmpChecksum   = 2
	icmpIdent      = 4
	icmpSeq        = 6
)

// ICMP types of the echo messages.
const (
	ICMPv4EchoReply   uint8 = 0
	ICMPv4EchoRequest uint8 = 8
	ICMPv6EchoRequest uint8 = 128
	ICMPv6EchoReply   uint8 = 129
)

// ICMPv6 types of Neighbor Discovery's neighbour messages (RFC 4861).
const (
	ICMPv6NeighborSolicit uint8 = 135
	ICMPv6NeighborAdvert  uint8 = 136
)

// ICMP is a view of an ICMPv4 or ICMPv6 echo header.
type ICMP []byte

// Type returns the message type.
func (i ICMP) Type() uint8 { return i[ICMPTypeOffset] }

// Code returns the message code.
func (i ICMP) Code() uint8 { return i[icmpCode] }

// Checksum returns the checksum field.
func (i ICMP) Checksum() uint16 { return binary.BigEndian.Uint16(i[icmpChecksum:]) }

// Ident returns the echo identifier.
func (i ICMP) Ident() uint16 { return binary.BigEndian.Uint16(i[icmpIdent:]) }

// Seq returns the echo sequence number.
func (i ICMP) Seq() uint16 { return binary.BigEndian.Uint16(i[icmpSeq:]) }

// SetTypeCode sets type and code.
func (i ICMP) SetTypeCode(typ, code uint8) { i[ICMPTypeOffset], i[icmpCode] = typ, code }

// SetChecksum stores a checksum.
func (i ICMP) SetChecksum(c uint16) { binary.BigEndian.PutUint16(i[icmpChecksum:], c) }

// SetIdent sets the echo identifier.
func (i ICMP) SetIdent(id uint16) { binary.BigEndian.PutUint16(i[icmpIdent:], id) }

// SetSeq sets the echo sequence number.
func (i ICMP) SetSeq(s uint16) { binary.BigEndian.PutUint16(i[icmpSeq:], s) }

// CalculateChecksum computes the checksum of the message i (header and
// data). pseudo is 0 for ICMPv4 and the IPv6 pseudo-header sum for ICMPv6.
func (i ICMP) CalculateChecksum(pseudo uint64) uint16 {
	s := Sum(i[:icmpChecksum], pseudo)
	s = Sum(i[icmpChecksum+2:], s)
	return ^Fold(s)
}
