package recv

import (
	"encoding/json"
	"testing"
)

// TestLatencyBeyondHundredSeconds (issue #29): a capture of wpg's frames
// replayed long after it was made carries transmit times from then, so
// its frames arrive with latencies of minutes or hours. The summary read
// max_ns 100,059,316,223 (the histogram's 100 s bound) beside a stream's
// 2,704,554,505,801: the latency summary covers what it records, its
// percentiles too, and a merge of receivers keeps it.
func TestLatencyBeyondHundredSeconds(t *testing.T) {
	const tx = 1_000_000_000
	lat := []int64{2_704_554_505_801, 2_704_555_505_801, 2_704_556_000_000, 5_000_000_000}
	tr := NewTracker()
	for i, d := range lat {
		tr.Observe(3, uint64(i), tx, tx+d, 64)
	}
	r := tr.Result()
	l := r.Latency
	if l == nil || l.MaxNs != 2_704_556_000_000 || r.Streams[0].LatencyMaxNs != l.MaxNs || l.MinNs != 5_000_000_000 {
		t.Fatalf("latency %+v, stream max %d: want max 2,704,556,000,000 and min 5 s", l, r.Streams[0].LatencyMaxNs)
	}
	if l.P50Ns < 2_700_000_000_000 || l.P50Ns > l.MaxNs || l.P99Ns > l.MaxNs {
		t.Errorf("p50 %d p99 %d: want about 2704 s and at most the max", l.P50Ns, l.P99Ns)
	}
	b, err := r.MarshalPeer()
	if err != nil {
		t.Fatal(err)
	}
	peer, err := UnmarshalPeer(b)
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(peer, NewTracker().Result())
	if m.Latency == nil || m.Latency.MaxNs != l.MaxNs || m.Latency.P50Ns != l.P50Ns {
		t.Errorf("merged: %+v, want max %d p50 %d", m.Latency, l.MaxNs, l.P50Ns)
	}
	var doc struct {
		Latency struct {
			Max int64 `json:"max_ns"`
		} `json:"latency"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Latency.Max != l.MaxNs {
		t.Errorf("JSON max_ns %d (%v)", doc.Latency.Max, err)
	}
}
