package job_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/job"
)

// capture writes a classic pcap of n copies of f, 1 ms apart.
func capture(t *testing.T, name string, f []byte, n int) string {
	path := filepath.Join(t.TempDir(), name)
	testbed.WritePcap(t, path, 65535, false, testbed.Records(n, f, 0, time.Millisecond))
	return path
}

// Replaying a capture of wpg's own frames as captured keeps their old
// signatures, which a wpg receiver counts: a 1000-record capture looped
// twice read as 1000 duplicates with 2 s of latency, and nothing said
// why. The report says so, and how to sign the frames anew; a capture of
// other traffic gets no such note.
func TestReplayOfSignedCaptureIsNoted(t *testing.T) {
	signed := make([]byte, 64)
	frame.PutSignature(signed, frame.Signature{Stream: 0, Seq: 7, Workers: 1, TxNs: 12345})
	for _, c := range []struct {
		name string
		f    []byte
		want bool
	}{{"wpg.pcap", signed, true}, {"other.pcap", make([]byte, 64), false}} {
		s := job.NewSpec()
		s.Backend, s.Pcap, s.Rate, s.Count = "null", capture(t, c.name, c.f, 3), "", 6
		rep, note := noted(t, s, "wpg signature")
		if rep.Frames != 6 {
			t.Fatalf("%s: report %+v", c.name, rep)
		}
		if got := note != ""; got != c.want {
			t.Fatalf("%s: note %q, want one: %v (notes %q)", c.name, note, c.want, rep.Notes)
		}
		if c.want && (!strings.HasPrefix(note, "3 of the 3 records of ") || !strings.Contains(note, "duplicates") || !strings.Contains(note, "signature: true")) {
			t.Errorf("%s: note %q", c.name, note)
		}
	}
}
