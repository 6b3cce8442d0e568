// Package hdrlog writes wpg's histograms (internal/hist, in their JSON
// form) as HdrHistogram interval logs, the format HdrHistogram's tools
// (HistogramLogProcessor, HdrHistogram plotter, hdrhistogram-go's reader)
// read: `wpg send --hdr-out` (the pacer's lateness) and `wpg recv
// --hdr-out` (the one-way latency).
package hdrlog

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// wire is internal/hist's JSON form: bounds, bucket count, and the
// non-zero buckets as index, count pairs.
type wire struct {
	Lo     int64      `json:"lo"`
	Hi     int64      `json:"hi"`
	Len    int        `json:"len"`
	Counts [][2]int64 `json:"counts"`
}

// Decode rebuilds an HdrHistogram (3 significant digits, as
// internal/hist keeps them) from the JSON of an internal/hist histogram,
// refusing bounds or buckets that do not fit.
func Decode(b []byte) (*hdrhistogram.Histogram, error) {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	if w.Lo < 1 || w.Hi <= w.Lo {
		return nil, fmt.Errorf("histogram: bounds %d … %d", w.Lo, w.Hi)
	}
	s := hdrhistogram.New(w.Lo, w.Hi, 3).Export()
	if w.Len != len(s.Counts) {
		return nil, fmt.Errorf("histogram: %d buckets, want %d for bounds %d … %d", w.Len, len(s.Counts), w.Lo, w.Hi)
	}
	for _, p := range w.Counts {
		if p[0] < 0 || p[0] >= int64(len(s.Counts)) || p[1] < 0 {
			return nil, fmt.Errorf("histogram: bucket %d count %d out of range", p[0], p[1])
		}
		s.Counts[p[0]] = p[1]
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	return hdrhistogram.Import(s), nil
}

// Write writes h as an interval log of one interval from start to end,
// tagged tag (values in nanoseconds; HdrHistogram's tools scale them with
// their -outputValueUnitRatio), preceded by a comment saying what it is.
func Write(w io.Writer, h *hdrhistogram.Histogram, start, end time.Time, tag, comment string) error {
	h.SetStartTimeMs(start.UnixMilli())
	h.SetEndTimeMs(end.UnixMilli())
	h.SetTag(tag)
	lw := hdrhistogram.NewHistogramLogWriter(w)
	lw.SetBaseTime(start.UnixMilli())
	for _, f := range []func() error{
		func() error { return lw.OutputComment(comment) },
		lw.OutputLogFormatVersion,
		func() error { return lw.OutputStartTime(start.UnixMilli()) },
		func() error { return lw.OutputBaseTime(start.UnixMilli()) },
		lw.OutputLegend,
		func() error { return lw.OutputIntervalHistogram(h) },
	} {
		if err := f(); err != nil {
			return fmt.Errorf("histogram log: %w", err)
		}
	}
	return nil
}
