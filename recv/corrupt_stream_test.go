package recv

import (
	"bytes"
	"strings"
	"testing"
)

// TestCorruptedOnlyStreamIsListed (issue #29): a stream of which only
// corrupted frames arrived (a device that damaged every frame of one
// flow) was nowhere in the per-stream table: its frames counted only in
// the run-wide corrupted. Every stream a frame named is listed, with
// its corrupted frames, also after a merge of receivers.
func TestCorruptedOnlyStreamIsListed(t *testing.T) {
	tr := NewTracker()
	for i := uint64(0); i < 10; i++ {
		tr.Observe(1, i, 0, 0, 64)
	}
	tr.CorruptStream(1, 64)
	for range 3 {
		tr.CorruptStream(7, 100)
	}
	r := tr.Result()
	if r.Corrupted != 4 || r.CorruptedBytes != 364 || len(r.Streams) != 2 {
		t.Fatalf("corrupted %d (%d bytes), streams %+v", r.Corrupted, r.CorruptedBytes, r.Streams)
	}
	if s := r.Streams[0]; s.Stream != 1 || s.Frames != 10 || s.Corrupted != 1 {
		t.Errorf("stream 1: %+v, want 10 frames and 1 corrupted", s)
	}
	if s := r.Streams[1]; s.Stream != 7 || s.Frames != 0 || s.Corrupted != 3 {
		t.Errorf("stream 7: %+v, want 0 frames and 3 corrupted", s)
	}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	table := buf.String()[strings.Index(buf.String(), "stream "):]
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "corr") || !strings.HasPrefix(strings.TrimSpace(lines[2]), "7") || !strings.Contains(lines[2], " 3 ") {
		t.Errorf("per-stream table:\n%s", table)
	}
	m := Merge(r, r)
	if len(m.Streams) != 2 || m.Streams[1].Corrupted != 6 || m.Streams[0].Corrupted != 2 {
		t.Errorf("merged streams %+v", m.Streams)
	}
}
