package frame

import "encoding/binary"

// SignatureLen is the size of the wpg packet signature in bytes.
const SignatureLen = 20

// SignatureMagic marks the start of a signature ("WP" in ASCII).
const SignatureMagic uint16 = 0x5750

// SeqBits is the width of the sequence number in a signature; the byte
// above it carries the sender's worker count (SeqWord).
const SeqBits = 56

// MaxSeq is the largest sequence number a signature carries.
const MaxSeq = 1<<SeqBits - 1

// MaxSignatureWorkers is the largest worker count a signature can name
// (wpg's documented --workers limit).
const MaxSignatureWorkers = 256

// Signature is the trailer wpg writes into the last SignatureLen bytes of a
// packet's payload (big-endian):
//
//	offset 0  magic   uint16 (0x5750)
//	offset 2  stream  uint16
//	offset 4  workers uint8   the sender's worker count minus one (0: one worker)
//	offset 5  seq     uint56  per-stream packet index, starting at 0
//	offset 12 tx      uint64  transmit time, ns of CLOCK_MONOTONIC
//
// Worker i of W sends the packets of per-stream index k ≡ i (mod W), each
// worker in order: carrying W lets a receiver check order within each
// worker's share (k mod W) and take the interleaving of workers for what
// it is. A signature with the workers byte 0 is the one-worker signature of
// earlier versions, bit for bit.
//
// Placing it at the end of the frame lets a receiver find it without parsing
// the headers, and works for every layer stack (ARP frames carry it in their
// padding).
type Signature struct {
	Stream uint16
	// Seq is the per-stream packet index (at most MaxSeq).
	Seq uint64
	// Workers is the number of sender workers sharing the stream
	// (1 … MaxSignatureWorkers; 0 is written as 1).
	Workers int
	TxNs    int64
}

// SeqWord returns the 8 bytes at offset 4 of a signature as one big-endian
// word: seq (masked to SeqBits) with the worker count in the top byte.
// Workers outside 1 … MaxSignatureWorkers are written as 1. Renderers that
// patch the signature in place OR SeqWord(0, W) into each sequence number.
func SeqWord(seq uint64, workers int) uint64 {
	tag := uint64(0)
	if workers > 1 && workers <= MaxSignatureWorkers {
		tag = uint64(workers-1) << SeqBits
	}
	return tag | seq&MaxSeq
}

// PutSignature writes s into the last SignatureLen bytes of frame, which must
// be at least SignatureLen long.
func PutSignature(frame []byte, s Signature) {
	b := frame[len(frame)-SignatureLen:]
	binary.BigEndian.PutUint16(b[0:], SignatureMagic)
	binary.BigEndian.PutUint16(b[2:], s.Stream)
	binary.BigEndian.PutUint64(b[4:], SeqWord(s.Seq, s.Workers))
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
	w := binary.BigEndian.Uint64(b[4:])
	s.Seq = w & MaxSeq
	s.Workers = int(w>>SeqBits) + 1
	s.TxNs = int64(binary.BigEndian.Uint64(b[12:]))
	return s, true
}
