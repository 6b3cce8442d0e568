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
