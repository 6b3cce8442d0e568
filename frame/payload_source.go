package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"

	"github.com/wpg-dev/wpg/internal/memread"
)

// PayloadSource renders payload frames for one worker; it implements
// engine.Source. The first frame rendered into a buffer copies the base
// image into it (from a cache-resident 64 KiB block for the pattern and
// random fills); every frame then writes its header, stamps the sequence
// number every StampStride bytes and derives the CRC-32C from a
// precomputed base checksum in constant time. Payloads above 4 KiB are not
// copied again into a buffer that already carries the base image (the
// backends hand out the same staging or ring slots again), so a 1 GiB
// frame costs one 8-byte store per 4 KiB page on the sender, like a sender
// that fills its buffers once; the path still moves,
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
		shift := memread.CRC32CXPow(0)
		if last > 0 {
			step := memread.CRC32CXPow(8 * StampStride)
			term := memread.CRC32CXPow(8 * uint64(cfg.Size-s.stamps[last-1]-8))
			for k := last - 1; k >= 0; k-- {
				shift ^= term
				term = memread.CRC32CMulMod(term, step)
			}
		}
		s.stampTab = new([8][256]uint32)
		for i := range 8 {
			for v := range 256 {
				s.stampTab[i][v] = memread.CRC32CMulMod(shift, stampLinear(uint64(v)<<(8*i)))
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
		// A FIFO would block the open until a writer came (and ignore
		// signals meanwhile): the payload is read once, before sending.
		if st, err := os.Stat(cfg.File); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
			return nil, fmt.Errorf("--payload-file %s is a FIFO: the payload is read once, before sending; give a regular file or a device such as /dev/urandom", cfg.File)
		}
		f, err := os.Open(cfg.File)
		if err != nil {
			return nil, fmt.Errorf("--payload-file: %w", err)
		}
		defer f.Close()
		// A regular file shorter than the payload is read whole and repeated:
		// size the buffer by the file, so a 1 KiB file for a 1 GiB payload
		// does not cost a 1 GiB read buffer.
		want := cfg.Size
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 && st.Size() < int64(want) {
			want = int(st.Size())
		}
		b := make([]byte, want)
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
