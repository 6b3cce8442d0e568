package recv

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/wpg-dev/wpg/internal/hist"
)

// Merge combines the results of receivers that took part in one run (a
// local path starts one receiver per worker) into one Result of the same
// schema: counts and bytes summed (run-wide and per stream), the rates
// summed (the receivers ran at the same time), Seconds the longest, the
// latency percentiles taken from the merged histograms (exact across
// receivers, where every result carries its histogram: one from Tracker
// or UnmarshalPeer; otherwise the worst of each), NegativeLatencyMaxNs
// the worst, the jitter (run-wide and per stream) the receivers' weighted
// by their frames, Backend and Stop those of the first result, and
// Receivers the number of receivers. One result comes back unchanged.
func Merge(rs ...Result) Result {
	switch len(rs) {
	case 0:
		return Result{Schema: Schema}
	case 1:
		return rs[0]
	}
	m := Result{Schema: Schema, Backend: rs[0].Backend, Stop: rs[0].Stop, BPSLayer: rs[0].BPSLayer, Streams: []StreamResult{}}
	streams := map[uint16]*StreamResult{}
	latN := map[uint16]float64{} // per stream: frames weighting the mean
	jitN := map[uint16]float64{} // per stream: frames weighting the jitter
	var jitter JitterMean
	var hs []*hist.Hist
	exact := true
	for _, r := range rs {
		if r.Schema != "" && m.Schema == "" {
			m.Schema = r.Schema
		}
		m.Receivers += max(r.Receivers, 1)
		m.Frames += r.Frames
		m.Bytes += r.Bytes
		m.Lost += r.Lost
		m.Duplicated += r.Duplicated
		m.Reordered += r.Reordered
		m.OutOfWindow += r.OutOfWindow
		m.Corrupted += r.Corrupted
		m.CorruptedBytes += r.CorruptedBytes
		m.Unsigned += r.Unsigned
		m.UnsignedBytes += r.UnsignedBytes
		m.WrongStream += r.WrongStream
		m.WrongStreamBytes += r.WrongStreamBytes
		m.Datagrams += r.Datagrams
		m.UnsignedFragments += r.UnsignedFragments
		m.Expected += r.Expected
		m.Missing += r.Missing
		m.Seconds = max(m.Seconds, r.Seconds)
		m.PPS += r.PPS
		m.BPS += r.BPS
		m.NegativeLatency += r.NegativeLatency
		m.NegativeLatencyMaxNs = max(m.NegativeLatencyMaxNs, r.NegativeLatencyMaxNs)
		jitter.Add(r.JitterNs, r.Frames)
		if r.Latency != nil {
			if r.lat == nil {
				exact = false
			}
			hs = append(hs, r.lat)
			m.Latency = mergeLatency(m.Latency, r.Latency)
		}
		for _, s := range r.Streams {
			ms := streams[s.Stream]
			if ms == nil {
				ms = &StreamResult{Stream: s.Stream}
				streams[s.Stream] = ms
			}
			if s.LatencyMeanNs > 0 {
				w := float64(s.Frames)
				if ms.LatencyMeanNs == 0 || s.LatencyMinNs < ms.LatencyMinNs {
					ms.LatencyMinNs = s.LatencyMinNs
				}
				ms.LatencyMaxNs = max(ms.LatencyMaxNs, s.LatencyMaxNs)
				if tot := latN[s.Stream] + w; tot > 0 {
					ms.LatencyMeanNs = (ms.LatencyMeanNs*latN[s.Stream] + s.LatencyMeanNs*w) / tot
				}
				latN[s.Stream] += w
			}
			if s.JitterNs > 0 {
				w := float64(s.Frames)
				if tot := jitN[s.Stream] + w; tot > 0 {
					ms.JitterNs = int64(math.Round((float64(ms.JitterNs)*jitN[s.Stream] + float64(s.JitterNs)*w) / tot))
				}
				jitN[s.Stream] += w
			}
			ms.Frames += s.Frames
			ms.Bytes += s.Bytes
			ms.Lost += s.Lost
			ms.Duplicated += s.Duplicated
			ms.Reordered += s.Reordered
			ms.OutOfWindow += s.OutOfWindow
			ms.Corrupted += s.Corrupted
			ms.NextSeq = max(ms.NextSeq, s.NextSeq)
		}
	}
	m.JitterNs = jitter.Ns()
	for _, s := range streams {
		m.Streams = append(m.Streams, *s)
	}
	sort.Slice(m.Streams, func(i, j int) bool { return m.Streams[i].Stream < m.Streams[j].Stream })
	if exact && len(hs) > 0 {
		h := hist.Merged(latencyMinNs, latencyMaxNs, hs...)
		m.lat = h
		m.Latency = latencyOf(h)
	}
	return m
}

// HasHistogram reports whether r carries the histogram behind its
// latency (from a Tracker or UnmarshalPeer of what MarshalPeer wrote), so
// that Merge takes exact percentiles from it.
func (r Result) HasHistogram() bool { return r.lat != nil }

// Merge returns Merge(r, other).
func (r Result) Merge(other Result) Result { return Merge(r, other) }

// mergeLatency combines two summaries without their histograms: samples
// summed, the mean weighted by them, the minimum the least, every
// percentile and the maximum the worst (an upper bound).
func mergeLatency(a, b *Latency) *Latency {
	if a == nil {
		c := *b
		return &c
	}
	n := a.Samples + b.Samples
	m := &Latency{Samples: n, MinNs: min(a.MinNs, b.MinNs), P50Ns: max(a.P50Ns, b.P50Ns), P99Ns: max(a.P99Ns, b.P99Ns),
		P999Ns: max(a.P999Ns, b.P999Ns), MaxNs: max(a.MaxNs, b.MaxNs)}
	if n > 0 {
		m.MeanNs = (a.MeanNs*float64(a.Samples) + b.MeanNs*float64(b.Samples)) / float64(n)
	}
	return m
}

// peerForm is a Result as a receiver hands it to its sender (MarshalPeer):
// the JSON of `wpg recv --json` and the latency histogram behind Latency.
type peerForm struct {
	Result
	LatencyHistogram *hist.Hist `json:"latency_histogram,omitempty"`
}

// MarshalPeer encodes r as a receiver hands it to its sender in the peer
// protocol's answer: the JSON of `wpg recv --json` plus
// "latency_histogram", the counts behind Latency, so that the sender's
// Merge gives exact percentiles across receivers.
func (r Result) MarshalPeer() ([]byte, error) {
	return json.Marshal(peerForm{Result: r, LatencyHistogram: r.lat})
}

// UnmarshalPeer decodes what MarshalPeer wrote (or the plain JSON of
// `wpg recv --json`, without a histogram).
func UnmarshalPeer(b []byte) (Result, error) {
	var f peerForm
	if err := json.Unmarshal(b, &f); err != nil {
		return Result{}, err
	}
	r := f.Result
	if r.Latency != nil {
		r.lat = f.LatencyHistogram
	}
	return r, nil
}

// JitterMean is the RFC 3550 interarrival jitter J of several receivers
// together: each receiver's J weighted by the frames it received. Merge
// gives a merged result's with it, and a sender's live view of its
// receivers (a port pair's, a local path's) the run's so far.
type JitterMean struct {
	sum, frames float64
}

// Add takes one receiver's J (ns) and its frames; a J of 0 (not
// measured: fewer than two timed frames, or a receiver that does not
// say it) adds nothing.
func (m *JitterMean) Add(jitterNs int64, frames uint64) {
	if jitterNs > 0 {
		m.sum += float64(jitterNs) * float64(frames)
		m.frames += float64(frames)
	}
}

// Ns is the mean, rounded to the nanosecond; 0 when no receiver gave one.
func (m JitterMean) Ns() int64 {
	if m.frames == 0 {
		return 0
	}
	return int64(math.Round(m.sum / m.frames))
}
