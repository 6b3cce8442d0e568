package recv

import (
	"encoding/json"
	"testing"
)

// Merge sums the counts of two receivers (run-wide and per stream) and
// takes the latency percentiles from the merged histograms: exactly those
// of one receiver that saw every frame, not the worst of the two.
func TestMergeCountsAndPercentiles(t *testing.T) {
	a, b, all := NewTracker(), NewTracker(), NewTracker()
	// Receiver a: 900 frames at 1 µs; receiver b: 100 frames at 1 ms
	// (with a gap: 2 lost). Over all 1000 frames p50 is 1 µs, p99 1 ms;
	// b alone has p50 = 1 ms, so max-of-percentiles would say p50 1 ms.
	for i := uint64(0); i < 900; i++ {
		a.Observe(1, i, 1, 1_001, 100)
		all.Observe(1, i, 1, 1_001, 100)
	}
	for i := uint64(0); i < 102; i++ {
		if i == 10 || i == 11 {
			continue
		}
		b.Observe(2, i, 1, 1_000_001, 200)
		all.Observe(2, i, 1, 1_000_001, 200)
	}
	b.Corrupt(50)
	all.Corrupt(50)
	ra, rb, want := a.Result(), b.Result(), all.Result()
	// Through the peer protocol's form, as a sender receives them.
	for _, r := range []*Result{&ra, &rb} {
		enc, err := r.MarshalPeer()
		if err != nil {
			t.Fatal(err)
		}
		if *r, err = UnmarshalPeer(enc); err != nil {
			t.Fatal(err)
		}
	}
	m := Merge(ra, rb)
	if m.Receivers != 2 || m.Schema != Schema || m.Frames != 1000 || m.Bytes != 900*100+100*200 || m.Lost != 2 || m.Corrupted != 1 || m.CorruptedBytes != 50 {
		t.Fatalf("merged counts: %+v", m)
	}
	if len(m.Streams) != 2 || m.Streams[0].Frames != 900 || m.Streams[1].Frames != 100 || m.Streams[1].Lost != 2 || m.Streams[1].NextSeq != 102 {
		t.Fatalf("merged streams: %+v", m.Streams)
	}
	l, w := m.Latency, want.Latency
	if l == nil || l.Samples != 1000 || l.P50Ns != w.P50Ns || l.P99Ns != w.P99Ns || l.P999Ns != w.P999Ns || l.MaxNs != w.MaxNs || l.MinNs != w.MinNs {
		t.Fatalf("merged latency %+v; want that of one receiver of every frame %+v", l, w)
	}
	if l.P50Ns >= 10_000 {
		t.Fatalf("merged p50 %d ns: the worst receiver's, not the merged one", l.P50Ns)
	}
	// The plain JSON keeps the schema's shape: no histogram in it.
	var doc map[string]any
	b2, _ := json.Marshal(m)
	if err := json.Unmarshal(b2, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["latency_histogram"]; ok || doc["receivers"] != 2.0 || doc["schema"] != Schema {
		t.Fatalf("merged JSON %s", b2)
	}
	if one := Merge(ra); one.Receivers != 0 || one.Frames != 900 {
		t.Fatalf("Merge of one: %+v", one)
	}
}

// Results without histograms (the plain JSON of `wpg recv --json`) still
// merge: counts summed, percentiles the worst (an upper bound).
func TestMergeWithoutHistograms(t *testing.T) {
	one := []byte(`{"schema":"wpg.recv/v1","frames":2,"lost":1,"latency":{"samples":2,"min_ns":5,"mean_ns":10,"p50_ns":10,"p99_ns":20,"p999_ns":20,"max_ns":20}}`)
	r, err := UnmarshalPeer(one)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Merge(r)
	if m.Frames != 4 || m.Lost != 2 || m.Receivers != 2 || m.Latency.Samples != 4 || m.Latency.P99Ns != 20 || m.Latency.MinNs != 5 {
		t.Fatalf("merged %+v latency %+v", m, m.Latency)
	}
}

// A peer form with a histogram that does not fit is refused.
func TestUnmarshalPeerRefusesBadHistogram(t *testing.T) {
	for _, b := range []string{
		`{"frames":1,"latency":{"samples":1},"latency_histogram":{"lo":0,"hi":10,"len":1,"counts":[]}}`,
		`{"frames":1,"latency":{"samples":1},"latency_histogram":{"lo":1,"hi":100000000000,"len":3,"counts":[]}}`,
		`{"frames":1,"latency":{"samples":1},"latency_histogram":{"lo":1,"hi":100000000000,"len":39936,"counts":[[99999999,1]]}}`,
	} {
		if _, err := UnmarshalPeer([]byte(b)); err == nil {
			t.Errorf("UnmarshalPeer(%s) took it", b)
		}
	}
}
