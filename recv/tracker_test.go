package recv

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTrackerInOrder(t *testing.T) {
	tr := NewTracker()
	for i := uint64(0); i < 10000; i++ {
		tr.Observe(uint16(i%3), i/3, 1000, 1500, 64)
	}
	r := tr.Result()
	if r.Frames != 10000 || r.Bytes != 640000 || r.Lost != 0 || r.Duplicated != 0 || r.Reordered != 0 || !r.OK() {
		t.Fatalf("in-order: %+v", r)
	}
	if len(r.Streams) != 3 || r.Streams[0].Frames != 3334 || r.Streams[1].Frames != 3333 || r.Streams[2].Frames != 3333 {
		t.Fatalf("per stream: %+v", r.Streams)
	}
	if r.Latency == nil || r.Latency.Samples != 10000 || r.Latency.P50Ns != 500 || r.Latency.MaxNs != 500 {
		t.Fatalf("latency: %+v", r.Latency)
	}
}

func TestTrackerLossDupReorder(t *testing.T) {
	tr := NewTracker()
	for _, seq := range []uint64{0, 1, 2, 5, 6, 3, 6, 9} {
		tr.Observe(7, seq, 0, 0, 100)
	}
	s := tr.Result().Streams[0]
	// 3,4 skipped then 3 arrived late; 6 duplicated; 7,8 lost; 4 lost.
	if s.Frames != 7 || s.Lost != 3 || s.Duplicated != 1 || s.Reordered != 1 || s.NextSeq != 10 {
		t.Fatalf("got %+v", s)
	}
}

func TestTrackerLateStart(t *testing.T) {
	tr := NewTracker()
	for seq := uint64(12345); seq < 20000; seq++ {
		tr.Observe(1, seq, 0, 0, 60)
	}
	r := tr.Result()
	if r.Lost != 12345 || r.Frames != 20000-12345 {
		t.Fatalf("late start: lost %d frames %d", r.Lost, r.Frames)
	}
}

func TestTrackerWindow(t *testing.T) {
	tr := NewTracker()
	// A jump of more than a window clears it: old bits must not make a
	// late arrival look like a duplicate.
	tr.Observe(0, 0, 0, 0, 1)
	tr.Observe(0, 10, 0, 0, 1)
	tr.Observe(0, 10+WindowSize+5, 0, 0, 1)
	tr.Observe(0, 10+WindowSize, 0, 0, 1) // late, within window
	tr.Observe(0, 10+WindowSize, 0, 0, 1) // duplicate
	tr.Observe(0, 10, 0, 0, 1)            // older than the window: a late duplicate, taken as late
	tr.Observe(0, 5, 0, 0, 1)             // older than the window: late
	s := tr.Result().Streams[0]
	if s.Reordered != 3 || s.Duplicated != 1 || s.OutOfWindow != 2 || s.Lost != 10+WindowSize+5-2-3 {
		t.Fatalf("window: %+v", s)
	}
	// Bits cleared when the window slides by less than a word or more.
	tr = NewTracker()
	for seq := uint64(0); seq < 3*WindowSize; seq += 63 {
		tr.Observe(0, seq, 0, 0, 1)
	}
	for seq := uint64(3*WindowSize - 1); seq > 3*WindowSize-WindowSize/2; seq-- {
		if seq%63 != 0 {
			tr.Observe(0, seq, 0, 0, 1)
		}
	}
	s = tr.Result().Streams[0]
	if s.Duplicated != 0 {
		t.Fatalf("stale window bits made %d false duplicates", s.Duplicated)
	}
}

func TestTrackerCorruptUnsigned(t *testing.T) {
	tr := NewTracker()
	tr.Corrupt(100)
	tr.Unsigned(42)
	tr.Unsigned(58)
	r := tr.Result()
	if r.Corrupted != 1 || r.CorruptedBytes != 100 || r.Unsigned != 2 || r.UnsignedBytes != 100 || r.OK() {
		t.Fatalf("got %+v", r)
	}
}

func TestResultJSONAndTable(t *testing.T) {
	tr := NewTracker()
	tr.Observe(2, 0, 10, 20, 64)
	tr.Observe(2, 2, 10, 30, 64)
	r := tr.Result()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"frames":2`, `"lost":1`, `"streams":[{"stream":2`, `"p99_ns":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	if !strings.Contains(buf.String(), "lost") || !strings.Contains(buf.String(), "without signature") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestTrackerNoAllocs(t *testing.T) {
	tr := NewTracker()
	tr.Observe(1, 0, 1, 2, 64)
	seq := uint64(1)
	allocs := testing.AllocsPerRun(10000, func() {
		tr.Observe(1, seq, 1000, 2000+int64(seq%977), 64)
		seq += 1 + seq%5
	})
	if allocs != 0 {
		t.Fatalf("Observe allocates %.1f per frame", allocs)
	}
}

func BenchmarkObserve(b *testing.B) {
	tr := NewTracker()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tr.Observe(uint16(i&3), uint64(i>>2), 1000, 2000, 64)
	}
}

// TestTrackerRandomized checks the counts against a map-based reference
// on random sequences with drops, duplicates and local reordering (all
// within the window).
func TestTrackerRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		n := uint64(1 + rng.IntN(20000))
		var seqs []uint64
		for s := uint64(0); s < n; s++ {
			if rng.IntN(20) == 0 {
				continue // dropped
			}
			seqs = append(seqs, s)
			if rng.IntN(50) == 0 {
				seqs = append(seqs, s) // duplicated
			}
		}
		// Local reordering: swap neighbours up to 100 apart.
		for i := range seqs {
			if j := i + rng.IntN(100); rng.IntN(10) == 0 && j < len(seqs) {
				seqs[i], seqs[j] = seqs[j], seqs[i]
			}
		}
		tr := NewTracker()
		seen := map[uint64]bool{}
		var dups, maxSeq uint64
		for _, s := range seqs {
			tr.Observe(4, s, 0, 0, 1)
			if seen[s] {
				dups++
			}
			seen[s] = true
			maxSeq = max(maxSeq, s)
		}
		r := tr.Result()
		if len(seqs) == 0 {
			continue
		}
		wantLost := maxSeq + 1 - uint64(len(seen))
		if r.Frames != uint64(len(seen)) || r.Duplicated != dups || r.Lost != wantLost || r.OutOfWindow != 0 {
			t.Fatalf("round %d: frames %d dup %d lost %d, want %d %d %d", round, r.Frames, r.Duplicated, r.Lost, len(seen), dups, wantLost)
		}
	}
}

// A receiver told which streams to expect counts another stream's signed
// frames apart, and nowhere else.
func TestWrongStream(t *testing.T) {
	var set StreamSet
	set.Add(3)
	tr := NewTracker()
	tr.Expect(&set)
	for seq := range uint64(10) {
		tr.Observe(3, seq, 1, 2, 64)
		if seq%2 == 0 {
			tr.Observe(7, seq, 1, 2, 100)
		}
	}
	r := tr.Result()
	if r.Frames != 10 || r.WrongStream != 5 || r.WrongStreamBytes != 500 || len(r.Streams) != 1 || r.Lost != 0 {
		t.Fatalf("frames %d, wrong stream %d (%d B), %d streams, lost %d; want 10, 5 (500 B), 1, 0", r.Frames, r.WrongStream, r.WrongStreamBytes, len(r.Streams), r.Lost)
	}
	if m := Merge(r, r); m.WrongStream != 10 {
		t.Fatalf("merged wrong stream %d, want 10", m.WrongStream)
	}
}
