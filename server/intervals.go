package server

import (
	"bytes"
	"encoding/json"

	"github.com/wpg-dev/wpg/report"
)

// sampleIntervals turns a job's stored samples into the report's
// intervals (report.Interval, as --interval gives a CLI run): one per
// sample, from the sample before (0 for the first) to its second, with
// the frames and bytes sent in it, its rates, lateness p99, the frames
// its receivers counted lost in it and their latency p99; the last ends
// at the report's seconds where those fall within it (the part second).
// A job of more than MaxChartSamples samples gets MaxChartSamples
// intervals, each a run of consecutive seconds: the counts summed, the
// rates over the run, the percentiles the largest of its seconds'.
func sampleIntervals(xs []Sample, seconds float64) []report.Interval {
	per := (len(xs) + MaxChartSamples - 1) / MaxChartSamples // samples per interval
	out := make([]report.Interval, 0, min(len(xs), MaxChartSamples))
	var prev Sample // the totals before the next interval
	for i := 0; i < len(xs); i += per {
		group := xs[i:min(i+per, len(xs))]
		in := report.Interval{Start: float64(prev.T)}
		var pps, bps float64 // rate × seconds, summed
		for _, x := range group {
			from, end := max(in.End, in.Start), float64(x.T)
			if x.T == xs[len(xs)-1].T && seconds > from && seconds < end {
				end = seconds
			}
			pps, bps = pps+x.PPS*(end-from), bps+x.BPS*(end-from)
			in.End = end
			in.LatenessP99Ns = max(in.LatenessP99Ns, x.LatenessP99Ns)
			in.LatencyP99Ns = max(in.LatencyP99Ns, x.LatencyP99Ns)
		}
		last := group[len(group)-1]
		in.Frames, in.Bytes = last.Frames-prev.Frames, last.Bytes-prev.Bytes
		if d := in.End - in.Start; d > 0 {
			in.PPS, in.BPS = pps/d, bps/d
		}
		if last.Lost != nil {
			lost := *last.Lost
			if prev.Lost != nil {
				lost -= *prev.Lost
			}
			in.Lost = &lost
		}
		out = append(out, in)
		prev = last
	}
	return out
}

// withIntervals returns the report JSON doc with intervals[] added, where
// it has none and there are some: the members of doc as they were, in
// their order, and intervals last.
func withIntervals(doc []byte, ivs []report.Interval) []byte {
	var has struct {
		Intervals json.RawMessage `json:"intervals"`
	}
	body := bytes.TrimRight(doc, " \t\r\n")
	if len(ivs) == 0 || json.Unmarshal(doc, &has) != nil || len(has.Intervals) > 0 || len(body) < 2 || body[len(body)-1] != '}' {
		return doc
	}
	b, err := json.Marshal(ivs)
	if err != nil {
		return doc
	}
	out := make([]byte, 0, len(body)+len(b)+16)
	out = append(out, body[:len(body)-1]...)
	if len(bytes.TrimSpace(body[1:len(body)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"intervals":`...)
	out = append(out, b...)
	return append(out, '}')
}
