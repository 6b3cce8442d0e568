package job_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/job"
)

// snapCapture writes a classic pcap of n 60-byte records of frames that
// were wire bytes long on the wire (a capture's snap length, tcpdump -s).
func snapCapture(t *testing.T, n, wire int) string {
	path := filepath.Join(t.TempDir(), "snap60.pcap")
	testbed.WritePcap(t, path, 60, false, testbed.Records(n, make([]byte, 60), wire, time.Millisecond))
	return path
}

// A capture taken with a snap length (tcpdump -s 96) holds the first
// bytes of each frame: replayed, they went out 60 bytes long under
// headers that give the whole length, which every receiver drops, and
// nothing said so. The report says how many, and how to capture whole
// frames; a capture of whole frames gets no such note.
func TestReplayOfTruncatedCaptureIsNoted(t *testing.T) {
	for _, c := range []struct {
		wire int
		want bool
	}{{1514, true}, {60, false}} {
		s := job.NewSpec()
		s.Backend, s.Pcap, s.Rate = "null", snapCapture(t, 3, c.wire), "max"
		rep, note := noted(t, s, "snap length")
		if rep.Frames != 3 {
			t.Fatalf("report %+v", rep)
		}
		if got := note != ""; got != c.want {
			t.Fatalf("wire %d: note %q, want one: %v (notes %q)", c.wire, note, c.want, rep.Notes)
		}
		if c.want && (!strings.HasPrefix(note, "3 of the 3 records of ") || !strings.Contains(note, "-s 0")) {
			t.Errorf("note %q", note)
		}
	}
}
