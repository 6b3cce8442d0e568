package header

import "encoding/binary"

// UDPLen is the length of a UDP header.
const UDPLen = 8

// ProtoUDP is the IP protocol number of UDP.
const ProtoUDP uint8 = 17

// Offsets in a UDP header.
const (
	udpSrcPort  = 0
	udpDstPort  = 2
	udpLength   = 4
	udpChecksum = 6
)

// UDP is a view of a UDP header.
type UDP []byte

// SrcPort returns the source port.
func (u UDP) SrcPort() uint16 { return binary.BigEndian.Uint16(u[udpSrcPort:]) }

// DstPort returns the destination port.
func (u UDP) DstPort() uint16 { return binary.BigEndian.Uint16(u[udpDstPort:]) }

// Length returns the length of header and payload.
func (u UDP) Length() uint16 { return binary.BigEndian.Uint16(u[udpLength:]) }

// Checksum returns the checksum field.
func (u UDP) Checksum() uint16 { return binary.BigEndian.Uint16(u[udpChecksum:]) }

// SetSrcPort sets the source port.
func (u UDP) SetSrcPort(p uint16) { binary.BigEndian.PutUint16(u[udpSrcPort:], p) }

// SetDstPort sets the destination port.
func (u UDP) SetDstPort(p uint16) { binary.BigEndian.PutUint16(u[udpDstPort:], p) }

// SetLength sets the length field.
func (u UDP) SetLength(n uint16) { binary.BigEndian.PutUint16(u[udpLength:], n) }

// SetChecksum stores a checksum; a computed 0 is sent as 0xffff (RFC 768),
// since 0 means "no checksum".
func (u UDP) SetChecksum(c uint16) {
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(u[udpChecksum:], c)
}

// CalculateChecksum computes the checksum of the datagram u (header and
// payload, u's length being the UDP length) given the pseudo-header sum,
// with the checksum field taken as zero.
func (u UDP) CalculateChecksum(pseudo uint64) uint16 {
	s := Sum(u[:udpChecksum], pseudo)
	s = Sum(u[UDPLen:], s)
	c := ^Fold(s)
	if c == 0 {
		c = 0xffff
	}
	return c
}
