//go:build linux

package cma

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/peer/peertest"
)

// TestSummedReceiverCatchesCorruption: with --verify on the receiver of
// frames of 128 KiB and more folds the CRC-32C into each chunk it copies
// (and gives the staging slot back before the last chunk's CRC); a byte
// damaged in the sender's slot after rendering, in the first, a middle or
// the last chunk, on either side of a chunk boundary or the middle of the
// frame, must still make exactly that frame corrupt.
func TestSummedReceiverCatchesCorruption(t *testing.T) {
	// half is the payload offset of the page boundary at or below the
	// middle of the frame (the payload and its header).
	half := func(size int) int {
		return ((size+frame.PayloadHeaderLen)/2)&^4095 - frame.PayloadHeaderLen
	}
	for _, c := range []struct{ size, at int }{
		{460800, 100}, {460800, sumChunk + 9}, {460800, half(460800) - 1}, {460800, half(460800)},
		{1 << 20, 1<<20 - 20}, {1 << 20, half(1<<20) - 1}, {1 << 20, half(1 << 20)}, {1 << 20, sumChunk + 8},
		{3 << 20, 2*sumChunk + 4095}, {3 << 20, half(3<<20) + sumChunk + 1},
	} {
		r := peertest.CorruptLast(t, "cma", backend.Options{}, c.size, 20, c.at)
		if r.Backend == nil || r.Backend.Details["payload_crc"] == "" {
			t.Fatalf("size %d: the receiver did not sum payloads per chunk (details %v)", c.size, r.Backend)
		}
		if r.Corrupted != 1 || r.Frames != 19 || r.Lost != 0 {
			t.Fatalf("size %d, byte %d flipped in the last frame: frames=%d corrupted=%d lost=%d; want 19 intact, 1 corrupted",
				c.size, c.at, r.Frames, r.Corrupted, r.Lost)
		}
	}
	// Small frames are left to the decoder, and still checked.
	r := peertest.CorruptLast(t, "cma", backend.Options{}, 4096, 20, 100)
	if r.Corrupted != 1 || r.Frames != 19 {
		t.Fatalf("4 KiB frames: frames=%d corrupted=%d; want 19 and 1", r.Frames, r.Corrupted)
	}
}
