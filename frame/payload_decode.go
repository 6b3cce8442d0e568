package frame

import (
	"encoding/binary"

	"github.com/wpg-dev/wpg/internal/memread"
)

// PayloadFrameLen reads the header at the start of b (at least
// PayloadHeaderLen bytes) and returns the whole frame's length. ok is false
// when b does not start with a payload header of a known version.
func PayloadFrameLen(b []byte) (n int, ok bool) {
	if len(b) < PayloadHeaderLen || binary.LittleEndian.Uint32(b) != PayloadMagic || b[4] != PayloadVersion {
		return 0, false
	}
	return PayloadHeaderLen + int(binary.LittleEndian.Uint32(b[24:])), true
}

// decodeChunk is the piece of a payload whose stamps DecodePayload checks
// before it extends the CRC over it: a multiple of StampStride, well
// inside L2.
const decodeChunk = 64 * StampStride

// DecodePayload verifies a whole payload frame: header, length, every
// sequence stamp and, when the sender computed it, the CRC-32C. ok is false
// when b is not a payload frame at all (no magic, unknown version, shorter
// than a header); corrupt is true when it is one but its length, stamps or
// checksum are wrong (a torn, stale or damaged frame).
func DecodePayload(b []byte) (sig Signature, ok, corrupt bool) {
	sig, ok, corrupt = DecodePayloadHeader(b)
	if !ok || corrupt {
		return
	}
	if b[5]&flagEndStamps != 0 {
		// Sent with --verify off: DecodePayloadHeader checked both stamps
		// there are, and there is no checksum.
		return sig, true, false
	}
	p := b[PayloadHeaderLen:]
	stamp := sig.Seq + 1
	n := len(p)
	sum := b[5]&flagChecksum != 0
	// One pass in chunks: a chunk's stamps, then its CRC-32C, so that the
	// stamp lines are still in cache for the checksum and a large frame is
	// not walked twice. The CRC is folded with VPCLMULQDQ where the CPU
	// has it (memread.CRC32C: the same value as hash/crc32, from which the
	// sender's derived checksum is built).
	var crc uint32
	for c := 0; c < n; c += decodeChunk {
		end := min(c+decodeChunk, n)
		for off := c; off < end && off+16 <= n; off += StampStride {
			if binary.LittleEndian.Uint64(p[off:]) != stamp {
				return sig, true, true
			}
		}
		if sum {
			crc = memread.CRC32C(crc, p[c:end])
		}
	}
	if sum && crc != binary.LittleEndian.Uint32(b[28:]) {
		return sig, true, true
	}
	return sig, true, false
}

// DecodePayloadHeader is the cheap check of VerifySample and VerifyOff: the
// header, the length, and the first and last sequence stamps (which a
// sender writes first and last); it reads three cache lines.
func DecodePayloadHeader(b []byte) (sig Signature, ok, corrupt bool) {
	total, ok := PayloadFrameLen(b)
	if !ok {
		return sig, false, false
	}
	sig.Stream = binary.LittleEndian.Uint16(b[6:])
	sig.Seq = binary.LittleEndian.Uint64(b[8:])
	sig.TxNs = int64(binary.LittleEndian.Uint64(b[16:]))
	if total != len(b) || total-PayloadHeaderLen < MinPayload {
		return sig, true, true
	}
	p := b[PayloadHeaderLen:]
	stamp := sig.Seq + 1
	if binary.LittleEndian.Uint64(p) != stamp || binary.LittleEndian.Uint64(p[len(p)-8:]) != stamp {
		return sig, true, true
	}
	return sig, true, false
}

// PayloadDecoder returns the decoder a receiver uses for mode: DecodePayload
// for VerifyOn; DecodePayloadHeader (header and first and last stamps) for
// VerifyOff; for VerifySample the full check on one frame in SampleEvery
// and, on the others, the header checks plus a read of every payload byte
// (ReadPayload), so that sampling does not turn a receiver that works in
// place into one that only reads headers. (With VerifyOff the sender
// computes no checksum, and receivers that hand out frames in place read
// such frames themselves: see PayloadHasChecksum.) The sampling decoder
// keeps a counter: use one per receive loop.
func PayloadDecoder(mode VerifyMode) func(b []byte) (sig Signature, ok, corrupt bool) {
	return PayloadDecoderWith(mode, nil)
}

// PayloadDecoderWith is PayloadDecoder with the in-place reader of the
// sampled mode chosen by the caller for its run: read sums the payload
// (memread.Impl.Sum of the reader the run selected); nil selects the
// best reader of this CPU, as ReadPayload does.
func PayloadDecoderWith(mode VerifyMode, read func([]byte) uint64) func(b []byte) (sig Signature, ok, corrupt bool) {
	if read == nil {
		read = memread.Sum64
	}
	switch mode {
	case VerifyOff:
		return DecodePayloadHeader
	case VerifySample:
		n := 0
		return func(b []byte) (Signature, bool, bool) {
			n++
			if n == SampleEvery {
				n = 0
				return DecodePayload(b)
			}
			sig, ok, corrupt := DecodePayloadHeader(b)
			if ok && !corrupt {
				ReadPayloadWith(b, read)
			}
			return sig, ok, corrupt
		}
	}
	return DecodePayload
}

// PayloadHasChecksum reports whether b is a payload frame that carries a
// checksum (its sender ran with verification on or sampled).
func PayloadHasChecksum(b []byte) bool {
	_, ok := PayloadFrameLen(b)
	return ok && b[5]&flagChecksum != 0
}

// ReadPayload reads every byte of b's payload with the best in-place
// reader of this CPU (a vector sum through an indirect call into assembly,
// which the compiler cannot drop). Receivers that hand out frames in place
// call it for frames without a checksum, so that a bandwidth run measures
// a real read of the data.
func ReadPayload(b []byte) {
	if len(b) > PayloadHeaderLen {
		memread.Sum64(b[PayloadHeaderLen:])
	}
}

// ReadPayloadWith is ReadPayload with the reader the run selected (see
// PayloadDecoderWith); it returns the sum.
func ReadPayloadWith(b []byte, read func([]byte) uint64) uint64 {
	if len(b) > PayloadHeaderLen {
		return read(b[PayloadHeaderLen:])
	}
	return 0
}

// PayloadCRC is a payload's CRC-32C as the receiver computed it while it
// copied the frame into its own memory (see DecodePayloadSummed): Sum is
// the CRC-32C (initial value 0, as DecodePayload computes it) of every
// byte after the header; Valid says it was computed for the whole payload.
type PayloadCRC struct {
	Sum   uint32
	Valid bool
}

// DecodePayloadSummed is DecodePayload for a frame whose payload CRC the
// receiver computed itself, chunk by chunk while the bytes were still in
// its cache (the receiver's own copy of the frame, which nothing else
// writes before this call). It keeps every check of DecodePayload: the
// header, the length, every sequence stamp, and, when the sender computed
// one, the CRC-32C of every payload byte, compared with c.Sum instead of
// being computed again. Without a valid c it is DecodePayload.
func DecodePayloadSummed(b []byte, c PayloadCRC) (sig Signature, ok, corrupt bool) {
	if !c.Valid {
		return DecodePayload(b)
	}
	sig, ok, corrupt = DecodePayloadHeader(b)
	if !ok || corrupt || b[5]&flagEndStamps != 0 {
		return
	}
	p := b[PayloadHeaderLen:]
	stamp := sig.Seq + 1
	for off := 0; off+16 <= len(p); off += StampStride {
		if binary.LittleEndian.Uint64(p[off:]) != stamp {
			return sig, true, true
		}
	}
	if b[5]&flagChecksum != 0 && c.Sum != binary.LittleEndian.Uint32(b[28:]) {
		return sig, true, true
	}
	return sig, true, false
}
