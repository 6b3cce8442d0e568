package header

import "encoding/binary"

// TCPMinLen is the length of a TCP header without options.
const TCPMinLen = 20

// ProtoTCP is the IP protocol number of TCP.
const ProtoTCP uint8 = 6

// Offsets in a TCP header.
const (
	tcpSrcPort  = 0
	tcpDstPort  = 2
	tcpSeq      = 4
	tcpAck      = 8
	tcpDataOff  = 12 // data offset (4 bits, in 32-bit words), reserved bits
	tcpFlags    = 13
	tcpWindow   = 14
	tcpChecksum = 16
	tcpUrgent   = 18
)

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
func (t TCP) SrcPort() uint16 { return binary.BigEndian.Uint16(t[tcpSrcPort:]) }

// DstPort returns the destination port.
func (t TCP) DstPort() uint16 { return binary.BigEndian.Uint16(t[tcpDstPort:]) }

// Seq returns the sequence number.
func (t TCP) Seq() uint32 { return binary.BigEndian.Uint32(t[tcpSeq:]) }

// Ack returns the acknowledgment number.
func (t TCP) Ack() uint32 { return binary.BigEndian.Uint32(t[tcpAck:]) }

// DataOffset returns the header length in bytes.
func (t TCP) DataOffset() int { return int(t[tcpDataOff]>>4) * 4 }

// Flags returns the flag bits (TCPFin … TCPCwr).
func (t TCP) Flags() uint8 { return t[tcpFlags] }

// Window returns the receive window.
func (t TCP) Window() uint16 { return binary.BigEndian.Uint16(t[tcpWindow:]) }

// Checksum returns the checksum field.
func (t TCP) Checksum() uint16 { return binary.BigEndian.Uint16(t[tcpChecksum:]) }

// Urgent returns the urgent pointer.
func (t TCP) Urgent() uint16 { return binary.BigEndian.Uint16(t[tcpUrgent:]) }

// SetSrcPort sets the source port.
func (t TCP) SetSrcPort(p uint16) { binary.BigEndian.PutUint16(t[tcpSrcPort:], p) }

// SetDstPort sets the destination port.
func (t TCP) SetDstPort(p uint16) { binary.BigEndian.PutUint16(t[tcpDstPort:], p) }

// SetSeq sets the sequence number.
func (t TCP) SetSeq(n uint32) { binary.BigEndian.PutUint32(t[tcpSeq:], n) }

// SetAck sets the acknowledgment number.
func (t TCP) SetAck(n uint32) { binary.BigEndian.PutUint32(t[tcpAck:], n) }

// SetDataOffset sets the header length in bytes (a multiple of 4).
func (t TCP) SetDataOffset(n int) { t[tcpDataOff] = uint8(n/4) << 4 }

// SetFlags sets the flag bits.
func (t TCP) SetFlags(f uint8) { t[tcpFlags] = f }

// SetWindow sets the receive window.
func (t TCP) SetWindow(w uint16) { binary.BigEndian.PutUint16(t[tcpWindow:], w) }

// SetChecksum stores a checksum.
func (t TCP) SetChecksum(c uint16) { binary.BigEndian.PutUint16(t[tcpChecksum:], c) }

// SetUrgent sets the urgent pointer.
func (t TCP) SetUrgent(p uint16) { binary.BigEndian.PutUint16(t[tcpUrgent:], p) }

// CalculateChecksum computes the checksum of the segment t (header and
// payload) given the pseudo-header sum, with the checksum field taken as zero.
func (t TCP) CalculateChecksum(pseudo uint64) uint16 {
	s := Sum(t[:tcpChecksum], pseudo)
	s = Sum(t[tcpChecksum+2:], s)
	return ^Fold(s)
}

// TCP option kinds (RFC 9293, RFC 7323, RFC 2018).
const (
	TCPOptEnd           uint8 = 0
	TCPOptNOP           uint8 = 1
	TCPOptMSS           uint8 = 2
	TCPOptWScale        uint8 = 3
	TCPOptSACKPermitted uint8 = 4
	TCPOptTimestamps    uint8 = 8
)
