package peer

import (
	"errors"
	"fmt"
	"io"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/memread"
	"github.com/wpg-dev/wpg/internal/sys"
)

// ReadFunc is one read(2)-like call.
type ReadFunc func(b []byte) (int, error)

// StreamReader cuts a byte stream (pipe, unix stream socket) into wpg
// payload frames using the length in each header. It asks the kernel for
// exactly the bytes that complete the current frame when frames are large,
// so a frame that the pipe holds whole arrives in one read; small frames
// are read many per call (up to Chunk bytes).
type StreamReader struct {
	read  ReadFunc
	buf   []byte
	mem   *sys.SharedMapping // buf, once it has grown past the first 1 MiB
	r, w  int
	last  int // length of the last frame seen (frames of a run share it)
	Chunk int // read size for small frames (default 256 KiB)
	// Max is the largest frame, header included, that the stream may
	// carry (what the sender announced; 0: MaxFrameLen). A header claiming
	// more is corruption: nothing is allocated for it, the bytes buffered
	// are handed over as one corrupted frame and Next then fails.
	Max int
	// Avail, when set, returns the bytes ready to read (FIONREAD); the
	// first read then takes what is there, so that a stream of whole
	// frames is read one or more frames per call from the start.
	Avail func() int
	// Reads counts read calls that returned data; Frames counts frames.
	Reads, Frames uint64
	eof           bool
	bad           bool   // bytes that are not a payload frame arrived
	badErr        error  // what Next fails with after bad (ErrNotPayload when nil)
	consumed      uint64 // stream bytes cut into frames so far
	// Payload summing (SumPayloads): the CRC-32C of the frame at buffer
	// offset crcAt, over its payload bytes up to offset crcTo; crcAt < 0
	// when no frame is being summed.
	sum          bool
	sums         []frame.PayloadCRC
	crcAt, crcTo int
	crc          uint32
}

// MaxFrameLen is the largest payload frame: frame.MaxPayload bytes of
// payload and the header.
const MaxFrameLen = frame.PayloadHeaderLen + frame.MaxPayload

// NewStreamReader returns a reader calling read.
func NewStreamReader(read ReadFunc) *StreamReader {
	return &StreamReader{read: read, buf: newBuf(1 << 20), Chunk: 256 << 10, crcAt: -1}
}

// sumRead is the most one read asks for while the reader sums a large
// frame (SumPayloads).
const sumRead = 256 << 10

// SumPayloads makes the reader compute the CRC-32C of the payload of each
// frame that arrives over several reads, read by read, while each read's
// bytes are still in cache (a 64 MiB frame has left L2 by its last read;
// a decoder's pass over it afterwards reads it from L3 or memory). Sums
// then returns them for the decoder (frame.DecodePayloadSummed). A large
// frame is then read at most sumRead bytes per call.
func (s *StreamReader) SumPayloads() { s.sum = true }

// Sums returns, after Next returned n frames, n entries: the CRC-32C of
// view i's payload (every byte after its header, in the buffer the view
// points into), or an invalid entry for a frame that arrived in one read,
// carries no checksum or is not a payload frame (the decoder then checks
// it in full). Only with SumPayloads; valid until the next call of Next.
func (s *StreamReader) Sums() []frame.PayloadCRC { return s.sums }

// compacted records that the bytes from offset r moved to the front.
func (s *StreamReader) compacted(r int) {
	if s.crcAt >= 0 {
		s.crcAt -= r
		s.crcTo -= r
	}
}

// sumPartial extends the CRC of the incomplete frame at s.r over the bytes
// that arrived for it (SumPayloads).
func (s *StreamReader) sumPartial() {
	b := s.buf[s.r:s.w]
	l, ok := frame.PayloadFrameLen(b)
	if !ok || l > s.max() || len(b) >= l || !frame.PayloadHasChecksum(b) {
		return
	}
	if s.crcAt != s.r {
		s.crcAt, s.crcTo, s.crc = s.r, s.r+frame.PayloadHeaderLen, 0
	}
	if s.crcTo < s.w {
		s.crc = memread.CRC32C(s.crc, s.buf[s.crcTo:s.w])
		s.crcTo = s.w
	}
}

// sumOf returns the sum of the complete frame of l bytes at s.r.
func (s *StreamReader) sumOf(l int) frame.PayloadCRC {
	if s.crcAt != s.r {
		return frame.PayloadCRC{}
	}
	s.crcAt = -1
	if end := s.r + l; s.crcTo < end {
		s.crc = memread.CRC32C(s.crc, s.buf[s.crcTo:end])
	}
	return frame.PayloadCRC{Sum: s.crc, Valid: true}
}

// Presize makes the buffer large enough for frames of up to n bytes now
// (at set-up) rather than when the first such frame arrives: the buffer's
// pages are written once here, and on a virtual machine the first write to
// a page costs ~18 µs (64 MiB: 0.3 s), which a timed run should not see.
// n is capped at Max. The error is the *sys.AllocError of a buffer the
// system would not give.
func (s *StreamReader) Presize(n int) error {
	n = min(n, s.max())
	if n > len(s.buf) {
		if s.r > 0 {
			copy(s.buf, s.buf[s.r:s.w])
			s.compacted(s.r)
			s.w, s.r = s.w-s.r, 0
		}
		return s.grow(n)
	}
	return nil
}

// max is the largest frame length accepted.
func (s *StreamReader) max() int {
	if s.Max > 0 {
		return s.Max
	}
	return MaxFrameLen
}

// grow replaces the buffer by one of n bytes holding the same s.buf[:s.w]:
// mapped memory (sys.Alloc), so that a size the system cannot give is an
// error, not the runtime's fatal out of memory.
func (s *StreamReader) grow(n int) error {
	m, err := sys.AllocHuge(n, "the receive buffer")
	if err != nil {
		return err
	}
	copy(m.Bytes(), s.buf[:s.w])
	if s.mem != nil {
		s.mem.Close()
	}
	s.mem, s.buf = m, m.Bytes()
	return nil
}

// Close releases the buffer; the reader is unusable afterwards.
func (s *StreamReader) Close() {
	if s.mem != nil {
		s.mem.Close()
		s.mem = nil
	}
	s.buf, s.r, s.w = nil, 0, 0
}

// newBuf returns a zeroed buffer of n bytes whose pages have been written.
func newBuf(n int) []byte {
	b := make([]byte, n)
	sys.TouchWrite(b)
	return b
}

// ErrNotPayload says the stream does not carry wpg payload frames.
var ErrNotPayload = errors.New("stream does not carry wpg payload frames (was it sent with --raw, or by another program?)")

// Next fills views with the complete frames available after at most one
// read call, valid until the next call. It returns io.EOF at the end of the
// stream (an error if it ends inside a frame).
func (s *StreamReader) Next(views [][]byte) (int, error) {
	if s.r == s.w {
		s.r, s.w, s.crcAt = 0, 0, -1
	}
	n := s.cut(views)
	if n > 0 {
		return n, nil
	}
	if s.bad {
		if s.badErr != nil {
			return 0, s.badErr
		}
		return 0, ErrNotPayload
	}
	if s.eof {
		if s.w > s.r {
			return 0, fmt.Errorf("stream ended inside a frame (%d bytes of it arrived)", s.w-s.r)
		}
		return 0, io.EOF
	}
	// Make room: move a partial frame to the front and grow for big frames.
	need := s.frameNeed()
	if s.r > 0 {
		copy(s.buf, s.buf[s.r:s.w])
		s.compacted(s.r)
		s.w -= s.r
		s.r = 0
	}
	if need > len(s.buf) {
		if err := s.grow(need); err != nil {
			return 0, err
		}
	}
	want := need - s.w
	if s.last > 0 && s.last < s.Chunk {
		// Small frames: read a chunk's worth of whole frames.
		want = max(want, (s.Chunk/s.last)*s.last-s.w)
	} else if s.last == 0 {
		first := s.Chunk
		if s.Avail != nil {
			if a := s.Avail(); a >= frame.PayloadHeaderLen {
				first = a
			}
		}
		first = min(first, s.max())
		if first > len(s.buf) {
			if err := s.grow(first); err != nil {
				return 0, err
			}
		}
		want = max(want, first-s.w)
	}
	if s.sum && want > sumRead && (s.last == 0 || s.last >= s.Chunk) {
		// Summing a large frame: reads of a size whose bytes are still
		// in L2 when the CRC folds them (one read of a 64 MiB frame
		// otherwise returns up to the socket buffer, 8 MiB here).
		want = sumRead
	}
	if s.w+want > len(s.buf) {
		want = len(s.buf) - s.w
	}
	m, err := s.read(s.buf[s.w : s.w+want])
	if m > 0 {
		s.Reads++
		s.w += m
	}
	if err != nil {
		if !errors.Is(err, io.EOF) {
			return 0, err
		}
		s.eof = true
	} else if m == 0 {
		s.eof = true
	}
	n = s.cut(views)
	if n == 0 && s.eof {
		return s.Next(views)
	}
	return n, nil
}

// HasFrame reports whether a complete frame (or the end of the stream) is
// buffered, so that Next returns without a read call.
func (s *StreamReader) HasFrame() bool {
	if s.eof {
		return true
	}
	if s.w-s.r < frame.PayloadHeaderLen {
		return false
	}
	l, ok := frame.PayloadFrameLen(s.buf[s.r:s.w])
	return !ok || l > s.max() || s.w-s.r >= l
}

// frameNeed returns the bytes the buffer must hold for the current frame.
func (s *StreamReader) frameNeed() int {
	if s.w-s.r >= frame.PayloadHeaderLen {
		if l, ok := frame.PayloadFrameLen(s.buf[s.r:s.w]); ok && l <= s.max() {
			return l
		}
	}
	if s.last > 0 {
		return s.last
	}
	return frame.PayloadHeaderLen
}

func (s *StreamReader) cut(views [][]byte) int {
	if s.sum && len(s.sums) < len(views) {
		s.sums = make([]frame.PayloadCRC, len(views))
	}
	n := s.cutFrames(views)
	if s.sum && s.w-s.r >= frame.PayloadHeaderLen {
		s.sumPartial()
	}
	return n
}

func (s *StreamReader) cutFrames(views [][]byte) int {
	n := 0
	for n < len(views) && s.w-s.r >= frame.PayloadHeaderLen {
		l, ok := frame.PayloadFrameLen(s.buf[s.r:s.w])
		if !ok {
			// Hand the rest over as one unsigned blob so the receiver
			// counts it instead of stalling, then fail on the next call.
			if n == 0 {
				views[0] = s.buf[s.r:s.w]
				if s.sum {
					s.sums[0] = frame.PayloadCRC{}
				}
				s.r = s.w
				s.eof = true
				s.bad = true
				return 1
			}
			return n
		}
		if l > s.max() {
			// A length no frame of this stream can have: the header is
			// damaged, and the frames after it cannot be found. Count
			// what is buffered as one corrupted frame (its length does
			// not match its header), allocate nothing, then fail.
			if n == 0 {
				views[0] = s.buf[s.r:s.w]
				if s.sum {
					s.sums[0] = frame.PayloadCRC{}
				}
				s.badErr = fmt.Errorf("corrupted stream: the frame header at byte %d claims %d bytes, more than the largest frame of this stream (%d bytes); the frames after it cannot be found", s.consumed, l, s.max())
				s.consumed += uint64(s.w - s.r)
				s.r = s.w
				s.eof = true
				s.bad = true
				return 1
			}
			return n
		}
		if s.w-s.r < l {
			break
		}
		views[n] = s.buf[s.r : s.r+l : s.r+l]
		if s.sum {
			s.sums[n] = s.sumOf(l)
		}
		s.r += l
		s.consumed += uint64(l)
		s.last = l
		s.Frames++
		n++
	}
	return n
}
