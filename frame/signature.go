package frame

import "encoding/binary"

// SignatureLen is the size of the wpg packet signature in bytes.
const SignatureLen = 20

// SignatureMagic marks the start of a signature ("WP" in ASCII).
const SignatureMagic uint16 = 0x5750

// Signature is the trailer wpg writes into the last SignatureLen bytes of a
// packet's payload (big-endian):
//
//	offset 0  magic   uint16 (0x5750)
//	offset 2  stream  uint16
//	offset 4  seq     uint64  per-stream sequence number, starting at 0
//	offset 12 tx      uint64  transmit time, ns of CLOCK_MONOTONIC
//
// Placing it at the end of the frame lets a receiver find it without parsing
// the headers, and works for every layer stack (ARP frames carry it in their
// padding).
type Signature struct {
	Stream uint16
	Seq    uint64
	TxNs   int64
}

// PutSignature writes s into the last SignatureLen bytes of frame, which must
// be at least SignatureLen long.
func PutSignature(frame []byte, s Signature) {
	b := frame[len(frame)-SignatureLen:]
	binary.BigEndian.PutUint16(b[0:], SignatureMagic)
	binary.BigEndian.PutUint16(b[2:], s.Stream)
	binary.BigEndian.PutUint64(b[4:], s.Seq)
	binary.BigEndian.PutUint64(b[12:], uint64(s.TxNs))
}

// ParseSignature reads the signature at the end of frame. ok is false when
// the frame is too short or does not carry the magic.
func ParseSignature(frame []byte) (s Signature, ok bool) {
	if len(frame) < SignatureLen {
		return s, false
	}
	b := frame[len(frame)-SignatureLen:]
	if binary.BigEndian.Uint16(b[0:]) != SignatureMagic {
		return s, false
	}
	s.Stream = binary.BigEndian.Uint16(b[2:])
	s.Seq = binary.BigEndian.Uint64(b[4:])
	s.TxNs = int64(binary.BigEndian.Uint64(b[12:]))
	return s, true
}
