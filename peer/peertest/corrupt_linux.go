package peertest

import (
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/recv"
)

// CorruptLast sends count verified payload frames of size bytes through
// backend name to its own receiver (a child running job.Receive, --verify
// on), flipping one payload byte at offset at (from the start of the
// payload; not a stamp word) of the last frame after the sender rendered
// it, and returns the receiver's result. The last frame, so that no later
// frame reuses the damaged slot: a receiver that verifies must count
// exactly one corrupted frame and count-1 intact ones.
func CorruptLast(t *testing.T, name string, o backend.Options, size int, count uint64, at int) recv.Result {
	t.Helper()
	if at%frame.StampStride < 8 || at >= size {
		t.Fatalf("CorruptLast: offset %d is a stamp word or outside the payload of %d bytes", at, size)
	}
	s := openOwn(t, name, o, size, 1)
	src, err := frame.NewPayloadSource(frame.PayloadConfig{Size: size, Count: count, Verify: frame.VerifyOn}, 0, 1)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	bufs, lens := make([][]byte, 1), make([]int, 1)
	for sent := uint64(0); sent < count; {
		n, err := s.Reserve(bufs)
		if err != nil {
			s.Close()
			t.Fatalf("sent %d: %v", sent, err)
		}
		if n == 0 {
			continue
		}
		src.Render(bufs, lens, time.Now().UnixNano())
		if sent == count-1 {
			bufs[0][frame.PayloadHeaderLen+at] ^= 0x40
		}
		k, err := s.Commit(lens)
		sent += uint64(k)
		if err != nil {
			s.Close()
			t.Fatalf("sent %d: %v", sent, err)
		}
	}
	if err := s.Flush(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	return closeReport(t, s)
}
