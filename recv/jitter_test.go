package recv

import (
	"math"
	"testing"
)

// rfc3550 is J computed as RFC 3550 A.8 writes it, independently of the
// tracker: for each frame after the first, D is the difference of its
// transit time and the previous frame's, J += (|D| - J) / 16.
func rfc3550(transits []int64) float64 {
	var j float64
	for i := 1; i < len(transits); i++ {
		d := math.Abs(float64(transits[i] - transits[i-1]))
		j += (d - j) / 16
	}
	return j
}

// The tracker's J per stream and over all streams is RFC 3550's, in
// arrival order, late frames included, duplicates not, negative transits
// (clocks apart) too; Merge weights the receivers' by their frames.
func TestJitter(t *testing.T) {
	tr := NewTracker()
	var s0, s1, all []int64
	rx := int64(1_000_000)
	for i := range 200 {
		// Stream 0 alternates transits 10 µs and 30 µs, with a gap in
		// its sequence filled later (a late frame); stream 1 is steady
		// but for every 10th frame, and its clocks are apart (negative).
		seq := uint64(i)
		switch i {
		case 50:
			seq = 51
		case 51:
			seq = 50
		}
		tx0 := rx - 10_000 - int64(i%2)*20_000
		tr.Observe(0, seq, tx0, rx, 64)
		s0 = append(s0, rx-tx0)
		all = append(all, rx-tx0)
		if i == 100 {
			tr.Observe(0, seq, tx0, rx+5, 64) // a duplicate: not received anew
		}
		rx += 1000
		tx1 := rx + 3_000
		if i%10 == 0 {
			tx1 = rx + 1_000
		}
		tr.Observe(1, uint64(i), tx1, rx, 64)
		s1 = append(s1, rx-tx1)
		all = append(all, rx-tx1)
		rx += 1000
	}
	r := tr.Result()
	if r.Duplicated != 1 || r.Reordered != 1 {
		t.Fatalf("duplicated %d, reordered %d; want 1 each", r.Duplicated, r.Reordered)
	}
	for _, c := range []struct {
		what string
		got  int64
		want float64
	}{
		{"stream 0", r.Streams[0].JitterNs, rfc3550(s0)},
		{"stream 1", r.Streams[1].JitterNs, rfc3550(s1)},
		{"all streams", r.JitterNs, rfc3550(all)},
	} {
		if c.want < 100 || math.Abs(float64(c.got)-c.want) > 0.5 {
			t.Errorf("%s: J %d ns, RFC 3550 gives %.1f", c.what, c.got, c.want)
		}
	}
	// One frame: no difference yet.
	one := NewTracker()
	one.Observe(0, 0, 5, 10, 64)
	if j := one.Result().JitterNs; j != 0 {
		t.Errorf("one frame: J %d, want 0", j)
	}
	a, b := Result{Frames: 100, JitterNs: 1000, Streams: []StreamResult{{Stream: 0, Frames: 100, JitterNs: 1000}}},
		Result{Frames: 300, JitterNs: 2000, Streams: []StreamResult{{Stream: 0, Frames: 300, JitterNs: 2000}}}
	if m := Merge(a, b); m.JitterNs != 1750 || m.Streams[0].JitterNs != 1750 {
		t.Errorf("merged J %d (stream %d), want 1750", m.JitterNs, m.Streams[0].JitterNs)
	}
}
