package job

import (
	"encoding/json"

	"github.com/wpg-dev/wpg/pace"
)

// LatenessHistogram returns the cumulative lateness histogram behind
// s.Lateness in the JSON form of wpg's histograms (bounds and non-zero
// buckets, as a receiver's latency_histogram), or nil for a flat-out run:
// what `wpg send --hdr-out` writes as an HdrHistogram log.
func (s Snapshot) LatenessHistogram() ([]byte, error) {
	if s.lat == nil {
		return nil, nil
	}
	return json.Marshal(s.lat)
}

// LatenessHistogramSince returns the lateness histogram of the grants
// between prev and s, two snapshots of the same run with prev taken first
// (a zero prev: since the start), in the JSON form of LatenessHistogram:
// an empty histogram when no grant came in between, nil for a flat-out
// run. `wpg send --hdr-out --interval` writes one per interval.
func (s Snapshot) LatenessHistogramSince(prev Snapshot) ([]byte, error) {
	switch {
	case s.lat == nil:
		return nil, nil
	case prev.lat == nil:
		return json.Marshal(s.lat)
	case s.lat.Count() == prev.lat.Count():
		return json.Marshal(pace.LatenessHist())
	}
	return json.Marshal(s.lat.Sub(prev.lat))
}
