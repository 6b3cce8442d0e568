package recv

import (
	"bytes"
	"strings"
	"testing"
)

// TestStreamTablePrecision: the per-stream table writes the latency mean
// at the precision of the jitter beside it and of the latency line above
// (time.Duration's, to the nanosecond): it wrote "20.5µs" beside
// "26.083µs".
func TestStreamTablePrecision(t *testing.T) {
	r := Result{Frames: 4998, Bytes: 5277888, Seconds: 1, Latency: &Latency{Samples: 4998, P50Ns: 16079, P99Ns: 34431, MaxNs: 4545355},
		Streams: []StreamResult{{Stream: 0, Frames: 4998, Bytes: 5277888, NextSeq: 4998, LatencyMinNs: 5012, LatencyMeanNs: 20531.4, LatencyMaxNs: 4545355, JitterNs: 26083}}}
	var b bytes.Buffer
	r.WriteTable(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	row := strings.Fields(lines[len(lines)-1])
	if len(row) != 10 || row[8] != "20.531µs" || row[9] != "26.083µs" {
		t.Errorf("stream row %q: want lat mean 20.531µs and jitter 26.083µs\n%s", row, b.String())
	}
}
