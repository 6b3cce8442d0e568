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

// Encode writes h (3 significant digits) in internal/hist's JSON form,
// what Decode reads.
func Encode(h *hdrhistogram.Histogram) ([]byte, error) {
	s := h.Export()
	w := wire{Lo: h.LowestTrackableValue(), Hi: h.HighestTrackableValue(), Len: len(s.Counts), Counts: [][2]int64{}}
	for i, c := range s.Counts {
		if c != 0 {
			w.Counts = append(w.Counts, [2]int64{int64(i), c})
		}
	}
	return json.Marshal(w)
}

// Write writes h as an interval log of one interval from start to end,
// tagged tag (values in nanoseconds; HdrHistogram's tools scale them with
// their -outputValueUnitRatio), preceded by a comment saying what it is.
func Write(w io.Writer, h *hdrhistogram.Histogram, start, end time.Time, tag, comment string) error {
	l, err := NewLog(w, start, comment)
	if err != nil {
		return err
	}
	return l.Interval(h, start, end, tag)
}

// Log is an HdrHistogram interval log being written: a header, then a
// histogram per interval (`--hdr-out` with `--interval`: one per
// interval of the run, as HdrHistogram's own tools log them).
type Log struct {
	lw *hdrhistogram.HistogramLogWriter
}

// NewLog writes a log's header to w: the comment saying what the log
// holds, the format version, the start time (also the base time: the
// intervals' times count from it, in milliseconds) and the legend.
func NewLog(w io.Writer, start time.Time, comment string) (*Log, error) {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	lw.SetBaseTime(start.UnixMilli())
	for _, f := range []func() error{
		func() error { return lw.OutputComment(comment) },
		lw.OutputLogFormatVersion,
		func() error { return lw.OutputStartTime(start.UnixMilli()) },
		func() error { return lw.OutputBaseTime(start.UnixMilli()) },
		lw.OutputLegend,
	} {
		if err := f(); err != nil {
			return nil, fmt.Errorf("histogram log: %w", err)
		}
	}
	return &Log{lw: lw}, nil
}

// Interval writes h as the interval from start to end, tagged tag.
func (l *Log) Interval(h *hdrhistogram.Histogram, start, end time.Time, tag string) error {
	h.SetStartTimeMs(start.UnixMilli())
	h.SetEndTimeMs(end.UnixMilli())
	h.SetTag(tag)
	if err := l.lw.OutputIntervalHistogram(h); err != nil {
		return fmt.Errorf("histogram log: %w", err)
	}
	return nil
}

// Sub returns a histogram of the counts of h less those of o (which must
// have h's bounds and precision: an earlier cumulative copy of the same
// histogram); a bucket that would go below zero counts 0.
func Sub(h, o *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	s := h.Export()
	os := o.Export()
	for i := range s.Counts {
		if i < len(os.Counts) {
			s.Counts[i] = max(0, s.Counts[i]-os.Counts[i])
		}
	}
	return hdrhistogram.Import(s)
}

// Read returns the interval histograms of the log r, in order, with their
// times and tags (hdrhistogram-go's reader).
func Read(r io.Reader) ([]*hdrhistogram.Histogram, error) {
	lr := hdrhistogram.NewHistogramLogReader(r)
	var out []*hdrhistogram.Histogram
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return out, fmt.Errorf("histogram log: %w", err)
		}
		if h == nil {
			return out, nil
		}
		out = append(out, h)
	}
}
