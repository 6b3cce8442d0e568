package job

import "encoding/json"

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
