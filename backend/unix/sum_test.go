//go:build linux

package unix

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

// TestSummedReceiverCatchesCorruption: with --verify on the stream reader
// computes each payload's CRC-32C read by read; a byte damaged before the
// send, early, in the middle or at the end of a frame that arrives in many
// reads, must still make exactly that frame corrupt.
func TestSummedReceiverCatchesCorruption(t *testing.T) {
	for _, c := range []struct{ size, at int }{{460800, 100}, {4 << 20, 2<<20 + 9}, {4 << 20, 4<<20 - 20}, {4096, 100}} {
		r := peertest.CorruptLast(t, "unix", backend.Options{}, c.size, 12, c.at)
		if r.Backend == nil || r.Backend.Details["payload_crc"] != "per read" {
			t.Fatalf("size %d: the receiver did not sum payloads (details %v)", c.size, r.Backend)
		}
		if r.Corrupted != 1 || r.Frames != 11 || r.Lost != 0 {
			t.Fatalf("size %d, byte %d flipped in the last frame: frames=%d corrupted=%d lost=%d; want 11 intact, 1 corrupted",
				c.size, c.at, r.Frames, r.Corrupted, r.Lost)
		}
	}
}
