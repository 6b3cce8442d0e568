package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/wpg-dev/wpg/internal/memread"
)

// Payload frame layout (little-endian, the native order of the hosts wpg
// runs on; the packet Signature is big-endian because it travels on wires):
//
//	offset 0  magic    uint32  0x46475057 ("WPGF" in memory order)
//	offset 4  version  uint8   PayloadVersion
//	offset 5  flags    uint8   bit 0: checksum field is valid; bit 1: end
//	                           stamps only (FlagEndStamps)
//	offset 6  stream   uint16  PayloadConfig.Stream + worker index
//	offset 8  seq      uint64  sequence number within the stream, from 0
//	offset 16 tx       int64   transmit time, ns of CLOCK_MONOTONIC
//	offset 24 length   uint32  payload length in bytes (after the header)
//	offset 28 checksum uint32  CRC-32C (Castagnoli) of the payload
//	offset 32 payload  length bytes
//
// The payload is a base image (a fixed pattern, a seeded random block or a
// file, repeated to the payload length) in which the 8-byte word at every
// stamp position (offset 0, every StampStride bytes, and the last 8 bytes)
// is overwritten with seq+1 (little-endian). A frame whose slot or pipe
// page still holds an older frame therefore fails the stamp check even
// where the base bytes are identical, and the checksum covers every byte.
// A sender running with VerifyOff stamps only the first and the last word
// and says so with flag bit 1: a pure bandwidth run then writes no more of
// each frame than its header and two words, as the C references write none
// (their senders fill their buffers once).
const (
	PayloadMagic     uint32 = 0x46475057
	PayloadVersion   uint8  = 1
	PayloadHeaderLen        = 32
	// StampStride is the distance between sequence stamps in the payload.
	StampStride = 4096
	// MinPayload and MaxPayload bound PayloadConfig.Size.
	MinPayload = 64
	MaxPayload = 1 << 30

	flagChecksum = 1 << 0
	// flagEndStamps: only the first and the last payload word carry the
	// stamp (sent with VerifyOff); the words between hold the base image
	// or whatever an earlier frame left there.
	flagEndStamps = 1 << 1
	blockLen      = 64 << 10 // period of the pattern and random fills
)

// VerifyMode says how much of each payload frame the receiver checks.
type VerifyMode int

// Verification modes. VerifyOn is the default (zero value).
const (
	// VerifyOn checks header, stamps and the CRC-32C of every frame.
	VerifyOn VerifyMode = iota
	// VerifySample fully checks one frame in SampleEvery (the header and
	// the first and last stamps of the others).
	VerifySample
	// VerifyOff checks headers only; the sender does not compute the
	// checksum and stamps only the first and last payload words. For pure
	// bandwidth runs; the report says so.
	VerifyOff
)

// SampleEvery is the sampling period of VerifySample.
const SampleEvery = 64

// String returns "on", "sample" or "off".
func (m VerifyMode) String() string {
	switch m {
	case VerifyOn:
		return "on"
	case VerifySample:
		return "sample"
	case VerifyOff:
		return "off"
	}
	return fmt.Sprintf("VerifyMode(%d)", int(m))
}

// ParseVerify parses the --verify flag value.
func ParseVerify(s string) (VerifyMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "on", "full":
		return VerifyOn, nil
	case "sample":
		return VerifySample, nil
	case "off", "none":
		return VerifyOff, nil
	}
	return 0, fmt.Errorf("--verify %q: choose on, sample or off", s)
}

// Fill kinds for PayloadConfig.Fill.
const (
	FillPattern = "pattern"
	FillRandom  = "random"
	FillFile    = "file"
)

// PayloadConfig describes the payload frames of a run.
type PayloadConfig struct {
	Size   int        // payload bytes, MinPayload … MaxPayload
	Raw    bool       // payload only, no header and no stamps (for ffmpeg etc.)
	Fill   string     // FillPattern (default), FillRandom (seeded) or FillFile
	File   string     // the file of FillFile (--payload-file)
	Seed   uint64     // seed of FillRandom
	Count  uint64     // total frames across workers, 0 = unlimited
	Verify VerifyMode // VerifyOff: the sender skips the checksum
	Stream uint16     // stream id of worker 0; worker i uses Stream+i
}

// FrameLen is the length of one frame on the wire: header plus payload, or
// the payload alone when Raw.
func (c PayloadConfig) FrameLen() int {
	if c.Raw {
		return c.Size
	}
	return PayloadHeaderLen + c.Size
}

// Validate checks the configuration without touching files.
func (c PayloadConfig) Validate() error {
	if c.Size < MinPayload || c.Size > MaxPayload {
		return fmt.Errorf("payload size %d bytes is out of range: --size takes %d B … 1 GiB (e.g. --size 460800, --size 1MiB)", c.Size, MinPayload)
	}
	switch c.Fill {
	case "", FillPattern, FillRandom:
		if c.File != "" {
			return fmt.Errorf("--payload-file %q given with --fill %s: use --fill file (or drop --payload-file)", c.File, c.fill())
		}
	case FillFile:
		if c.File == "" {
			return errors.New("--fill file needs --payload-file PATH")
		}
	default:
		return fmt.Errorf("--fill %q: choose pattern, random or file", c.Fill)
	}
	if c.Verify < VerifyOn || c.Verify > VerifyOff {
		return fmt.Errorf("verify mode %d: choose on, sample or off", int(c.Verify))
	}
	return nil
}

func (c PayloadConfig) fill() string {
	if c.Fill == "" {
		return FillPattern
	}
	return c.Fill
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PayloadSource renders payload frames for one worker; it implements
// engine.Source. The first frame rendered into a buffer copies the base
// image into it (from a cache-resident 64 KiB block for the pattern and
// random fills); every frame then writes its header, stamps the sequence
// number every StampStride bytes and derives the CRC-32C from a
// precomputed base checksum in constant time. Payloads above 4 KiB are not
// copied again into a buffer that already carries the base image (the
// backends hand out the same staging or ring slots again), so a 1 GiB
// frame costs one 8-byte store per 4 KiB page on the sender, as in the C
// references whose senders fill their buffers once; the path still moves,
// and the receiver still reads and checks, every byte.
type PayloadSource struct {
	cfg     PayloadConfig
	block   []byte // base image period (len <= Size)
	stamps  []int  // stamp offsets within the payload
	baseCRC uint32 // CRC-32C of the base image with stamp words zeroed
	// stampTab[i][b] is the checksum contribution of byte i of the stamp
	// word having value b (the map stamp → contribution is linear).
	stampTab *[8][256]uint32
	next     uint64 // next sequence number
	step     uint64
	stream   uint16 // cfg.Stream + worker
	left     uint64 // frames left, when limited
	limited  bool
	frameLen int
	// primed holds the buffers (by their first byte) that already carry
	// the base image, for payloads above fullRenderMax.
	primed map[*byte]struct{}
}

// fullRenderMax is the payload size up to which every frame is rendered in
// full; above it a buffer that already carries the base image (the
// backends hand out the same staging slots or ring slots again) only gets
// its header and stamps rewritten, and maxPrimed bounds how many buffers
// the source remembers.
const (
	fullRenderMax = 4096
	maxPrimed     = 1 << 16
)

// NewPayloadSource builds worker's source of payload frames. Worker i of W
// is stream cfg.Stream+i with its own gap-free sequence 0, 1, 2, …, and
// sends its share of cfg.Count (the frames k ≡ i mod W of the run). Local
// paths give every worker its own channel and receiver, which would count
// the gaps of a strided sequence (k ≡ i mod W) as loss; one stream per
// worker is gap-free for a per-worker receiver and for a shared one alike.
func NewPayloadSource(cfg PayloadConfig, worker, workers int) (*PayloadSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if workers < 1 || worker < 0 || worker >= workers {
		return nil, fmt.Errorf("payload source: worker %d of %d is out of range", worker, workers)
	}
	block, err := baseBlock(cfg)
	if err != nil {
		return nil, err
	}
	s := &PayloadSource{
		cfg:      cfg,
		block:    block,
		next:     0,
		step:     1,
		stream:   cfg.Stream + uint16(worker),
		frameLen: cfg.FrameLen(),
	}
	if cfg.Count > 0 {
		s.limited = true
		if uint64(worker) < cfg.Count {
			s.left = (cfg.Count - uint64(worker) + uint64(workers) - 1) / uint64(workers)
		}
	}
	if !cfg.Raw && cfg.Verify == VerifyOff {
		s.stamps = []int{0, cfg.Size - 8}
	} else if !cfg.Raw {
		s.stamps = StampOffsets(cfg.Size)
		s.baseCRC = baseChecksum(block, cfg.Size, s.stamps)
		// shift = sum of x^(8*(n-p-8)) over stamp offsets p. The regular
		// stamps are StampStride apart, so walk them from the last one
		// multiplying by x^(8*StampStride) instead of exponentiating each.
		last := len(s.stamps) - 1 // the stamp at n-8: x^0
		shift := xpowBytes(0)
		if last > 0 {
			step := xpowBytes(StampStride)
			term := xpowBytes(uint64(cfg.Size - s.stamps[last-1] - 8))
			for k := last - 1; k >= 0; k-- {
				shift ^= term
				term = multModP(term, step)
			}
		}
		s.stampTab = new([8][256]uint32)
		for i := range 8 {
			for v := range 256 {
				s.stampTab[i][v] = multModP(shift, stampLinear(uint64(v)<<(8*i)))
			}
		}
	}
	return s, nil
}

// baseBlock returns the period of the base image.
func baseBlock(cfg PayloadConfig) ([]byte, error) {
	n := min(cfg.Size, blockLen)
	switch cfg.fill() {
	case FillRandom:
		b := make([]byte, n+8)
		r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5750475046524d31))
		for i := 0; i < len(b)-8; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], r.Uint64())
		}
		return b[:n], nil
	case FillFile:
		f, err := os.Open(cfg.File)
		if err != nil {
			return nil, fmt.Errorf("--payload-file: %w", err)
		}
		defer f.Close()
		b := make([]byte, cfg.Size)
		m, err := io.ReadFull(f, b)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("--payload-file %s is empty: give a file with at least one byte", cfg.File)
			}
			return nil, fmt.Errorf("--payload-file %s: %w", cfg.File, err)
		}
		return b[:m], nil // repeated when shorter than the payload
	default:
		b := make([]byte, n)
		for i := range b {
			// A ramp that changes with the 256-byte line so that shifted
			// or swapped lines are visible in a hex dump.
			b[i] = byte(i) ^ byte(i>>8)*0x1d
		}
		return b, nil
	}
}

// StampOffsets returns the payload offsets that carry the sequence stamp
// for a payload of n bytes: 0, every StampStride bytes, and n-8.
func StampOffsets(n int) []int {
	var out []int
	for p := 0; p+16 <= n; p += StampStride {
		out = append(out, p)
	}
	return append(out, n-8)
}

// baseChecksum is the CRC-32C of the base image of n bytes with every stamp
// word zeroed.
func baseChecksum(block []byte, n int, stamps []int) uint32 {
	var zero [8]byte
	crc := uint32(0)
	pos := 0
	for _, p := range stamps {
		crc = cyclicCRC(crc, block, pos, p)
		crc = crc32.Update(crc, castagnoli, zero[:])
		pos = p + 8
	}
	return cyclicCRC(crc, block, pos, n)
}

// cyclicCRC extends crc over base image bytes [from, to).
func cyclicCRC(crc uint32, block []byte, from, to int) uint32 {
	L := len(block)
	for from < to {
		o := from % L
		k := min(L-o, to-from)
		crc = crc32.Update(crc, castagnoli, block[o:o+k])
		from += k
	}
	return crc
}

// copyBase writes the base image into dst (len(dst) == payload size).
func copyBase(dst, block []byte) {
	L := len(block)
	if L >= len(dst) {
		copy(dst, block)
		return
	}
	n := copy(dst, block)
	// Doubling from dst itself would read cold memory; copying from the
	// cache-resident block keeps rendering a write-only pass.
	for n < len(dst) {
		n += copy(dst[n:], block)
	}
}

// Render implements engine.Source.
func (s *PayloadSource) Render(bufs [][]byte, lens []int, nowNs int64) int {
	n := s.cfg.Size
	for i := range bufs {
		if s.limited {
			if s.left == 0 {
				return i
			}
			s.left--
		}
		b := bufs[i][:s.frameLen]
		seq := s.next
		s.next += s.step
		lens[i] = s.frameLen
		if s.cfg.Raw {
			if !s.isPrimed(b) {
				copyBase(b, s.block)
			}
			continue
		}
		p := b[PayloadHeaderLen:]
		if !s.isPrimed(b) {
			copyBase(p, s.block)
		}
		stamp := seq + 1
		for _, off := range s.stamps {
			binary.LittleEndian.PutUint64(p[off:], stamp)
		}
		flags := uint8(flagEndStamps) // VerifyOff: s.stamps holds both ends only
		var sum uint32
		if s.cfg.Verify != VerifyOff {
			flags = flagChecksum
			t := s.stampTab
			sum = s.baseCRC ^ t[0][byte(stamp)] ^ t[1][byte(stamp>>8)] ^ t[2][byte(stamp>>16)] ^
				t[3][byte(stamp>>24)] ^ t[4][byte(stamp>>32)] ^ t[5][byte(stamp>>40)] ^
				t[6][byte(stamp>>48)] ^ t[7][byte(stamp>>56)]
		}
		binary.LittleEndian.PutUint32(b[0:], PayloadMagic)
		b[4] = PayloadVersion
		b[5] = flags
		binary.LittleEndian.PutUint16(b[6:], s.stream)
		binary.LittleEndian.PutUint64(b[8:], seq)
		binary.LittleEndian.PutUint64(b[16:], uint64(nowNs))
		binary.LittleEndian.PutUint32(b[24:], uint32(n))
		binary.LittleEndian.PutUint32(b[28:], sum)
	}
	return len(bufs)
}

// isPrimed reports whether b already carries the base image (outside the
// header and stamp words, which every frame rewrites) and records that it
// will once the caller has rendered it.
func (s *PayloadSource) isPrimed(b []byte) bool {
	if s.cfg.Size <= fullRenderMax {
		return false
	}
	k := &b[0]
	if _, ok := s.primed[k]; ok {
		return true
	}
	if s.primed == nil {
		s.primed = make(map[*byte]struct{})
	}
	if len(s.primed) < maxPrimed {
		s.primed[k] = struct{}{}
	}
	return false
}

// MaxFrame implements engine.Source.
func (s *PayloadSource) MaxFrame() int { return s.frameLen }

// MeanFrame implements engine.Source.
func (s *PayloadSource) MeanFrame() float64 { return float64(s.frameLen) }

// Plan implements engine.Source.
func (s *PayloadSource) Plan() (plan, detail string) {
	if s.cfg.Raw {
		how := "copied per frame"
		if s.cfg.Size > fullRenderMax {
			how = "copied once per buffer"
		}
		return "stream", fmt.Sprintf("raw %d-byte %s payload %s, no header", s.cfg.Size, s.cfg.fill(), how)
	}
	ck := "CRC-32C derived per frame in O(1)"
	how := "copied per frame"
	if s.cfg.Size > fullRenderMax {
		how = "copied once per buffer, header and stamps per frame"
	}
	if s.cfg.Verify == VerifyOff {
		ck = "no checksum (--verify off)"
	}
	return "stream", fmt.Sprintf("%d-byte %s payload %s, seq stamped at %d offsets, %s", s.cfg.Size, s.cfg.fill(), how, len(s.stamps), ck)
}

// Config returns the configuration the source was built with.
func (s *PayloadSource) Config() PayloadConfig { return s.cfg }

// PayloadFrameLen reads the header at the start of b (at least
// PayloadHeaderLen bytes) and returns the whole frame's length. ok is false
// when b does not start with a payload header of a known version.
func PayloadFrameLen(b []byte) (n int, ok bool) {
	if len(b) < PayloadHeaderLen || binary.LittleEndian.Uint32(b) != PayloadMagic || b[4] != PayloadVersion {
		return 0, false
	}
	return PayloadHeaderLen + int(binary.LittleEndian.Uint32(b[24:])), true
}

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
	for off := 0; off+16 <= n; off += StampStride {
		if binary.LittleEndian.Uint64(p[off:]) != stamp {
			return sig, true, true
		}
	}
	if b[5]&flagChecksum == 0 {
		return sig, true, false // sent with --verify off: nothing to compare
	}
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[28:]) {
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

// CRC-32C arithmetic modulo the Castagnoli polynomial in the reflected bit
// order of hash/crc32 (as in zlib's crc32_combine): appending m zero bytes
// to a raw CRC register multiplies it by x^(8m). With it the checksum of
// "base with stamps" is the base checksum xor the stamp's contribution
// multiplied by a per-size constant, computed once.
const castagnoliReflected = 0x82f63b78

// multModP returns a*b modulo P (reflected representation, x^0 = 1<<31).
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
	return p
}

// x2n[k] is x^(2^k) modulo P.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = multModP(p, p)
	}
	return
}()

// xpowBytes returns x^(8*m) modulo P: the effect of m zero bytes.
func xpowBytes(m uint64) uint32 {
	p := uint32(1) << 31
	for k := 3; m != 0; m, k = m>>1, k+1 {
		if m&1 != 0 {
			p = multModP(x2n[k&31], p)
		}
	}
	return p
}

// stampLinear is the raw (zero-initialised, unconditioned) CRC register of
// the 8 stamp bytes: the linear part of their contribution.
func stampLinear(stamp uint64) uint32 {
	var crc uint32
	for i := 0; i < 8; i++ {
		crc = castagnoli[byte(crc)^byte(stamp>>(8*i))] ^ crc>>8
	}
	return crc
}

// PayloadDecoder returns the decoder a receiver uses for mode: DecodePayload
// for VerifyOn; DecodePayloadHeader (header and first and last stamps) for
// VerifyOff; for VerifySample the full check on one frame in SampleEvery
// and, on the others, the header checks plus a read of every payload byte
// (a vector sum, package memread), so that sampling does not turn a
// receiver that works in place into one that only reads headers. (With
// VerifyOff the sender computes no checksum, and receivers that hand out
// frames in place read such frames themselves: see PayloadHasChecksum.)
// The sampling decoder keeps a counter: use one per receive loop.
func PayloadDecoder(mode VerifyMode) func(b []byte) (sig Signature, ok, corrupt bool) {
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
				ReadPayload(b)
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

// ReadPayload reads every byte of b's payload (a vector sum through an
// interface call into assembly, which the compiler cannot drop). Receivers
// that hand out frames in place call it for frames without a checksum, so
// that a bandwidth run measures a real read of the data.
func ReadPayload(b []byte) {
	if len(b) > PayloadHeaderLen {
		memread.Sum64(b[PayloadHeaderLen:])
	}
}
