// Package hist is the one nanosecond histogram of wpg: the pacer's
// lateness (package pace) and the receiver's one-way latency (package
// recv) record into it, and per-worker or per-receiver histograms merge
// with the same code, so percentiles of a merged run come from the merged
// counts, never from averaged percentiles. It is an HDR histogram with 3
// significant digits; recording allocates nothing.
package hist

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Hist counts values (ns) in [Lo, Hi]; a value outside is counted at the
// nearer bound, and Over counts those above Hi. Min and Max are the
// values recorded, exactly (not the bounds a value outside was counted
// at, nor the edge of a value's bucket), wherever every value was
// recorded into this histogram or one merged into it; the quantiles lie
// between them.
type Hist struct {
	lo, hi int64
	h      *hdrhistogram.Histogram
	// min and max are the extremes recorded, when exact.
	min, max int64
	// exact is false for a histogram whose values are known by their
	// buckets only (Sub's windows, one decoded without its extremes, or
	// one that merged such a histogram): Min and Max are then the
	// buckets'.
	exact bool
	// over counts the values recorded above hi.
	over int64
}

// New returns an empty histogram of values from lo to hi (lo ≥ 1).
func New(lo, hi int64) *Hist {
	return newHist(lo, hi, 3)
}

// NewCoarse returns an empty histogram of values from lo to hi with 2
// significant digits (within 1 %): an eighth of New's memory, for the
// short windows a pacer hands to readers while it runs.
func NewCoarse(lo, hi int64) *Hist {
	return newHist(lo, hi, 2)
}

func newHist(lo, hi int64, digits int) *Hist {
	return &Hist{lo: lo, hi: hi, h: hdrhistogram.New(lo, hi, digits), min: math.MaxInt64, max: math.MinInt64, exact: true}
}

// Lo and Hi are the histogram's bounds.
func (h *Hist) Lo() int64 { return h.lo }

// Hi is the histogram's upper bound (Lo).
func (h *Hist) Hi() int64 { return h.hi }

// Record counts v.
func (h *Hist) Record(v int64) {
	h.min, h.max = min(h.min, v), max(h.max, v)
	if v > h.hi {
		h.over++
	}
	_ = h.h.RecordValue(min(max(v, h.lo), h.hi))
}

// Over is the number of values recorded above Hi (counted at Hi: the
// quantiles above them read Hi, Max the largest).
func (h *Hist) Over() int64 {
	if h == nil {
		return 0
	}
	return h.over
}

// Merge adds the counts of o (nil adds nothing). Values of o outside h's
// bounds are counted at the nearer bound.
func (h *Hist) Merge(o *Hist) {
	if o == nil || o.Count() == 0 {
		return
	}
	if o.lo < h.lo || o.hi > h.hi {
		// hdrhistogram drops what does not fit: count it at the bound.
		for _, b := range o.h.Distribution() {
			if b.Count > 0 {
				_ = h.h.RecordValues(min(max(b.To, h.lo), h.hi), b.Count)
				if b.To > h.hi {
					h.over += b.Count
				}
			}
		}
	} else {
		h.h.Merge(o.h)
	}
	h.over += o.over
	h.exact = h.exact && o.exact
	h.min, h.max = min(h.min, o.min), max(h.max, o.max)
}

// Clone returns a copy that later records to h do not change.
func (h *Hist) Clone() *Hist {
	c := New(h.lo, h.hi)
	c.Merge(h)
	return c
}

// Frozen hands out read-only copies of a histogram that only grows (its
// values are never reset or replaced): one copy each time values came in,
// shared by every caller until more do. The zero value is ready.
type Frozen struct {
	copy *Hist
	n    int64 // h's count when copy was made
}

// Of returns a read-only copy of h as it is now: the one it returned last
// when h holds as many values as then (counts only grow: unchanged). A nil
// h gives nil.
func (f *Frozen) Of(h *Hist) *Hist {
	if h == nil {
		return nil
	}
	if f.copy == nil || h.Count() != f.n {
		f.copy, f.n = h.Clone(), h.Count()
	}
	return f.copy
}

// Reset empties h, keeping its bounds and its memory.
func (h *Hist) Reset() {
	h.h.Reset()
	h.min, h.max, h.exact, h.over = math.MaxInt64, math.MinInt64, true, 0
}

// Sub returns a new histogram holding the counts of h less those of o: the
// values recorded between two cumulative copies, o taken before h. A
// bucket that would go negative (o is not an earlier copy of h) counts 0;
// a nil o subtracts nothing.
func (h *Hist) Sub(o *Hist) *Hist {
	s := h.h.Export()
	if o != nil {
		os := o.h.Export()
		for i := range s.Counts {
			if i < len(os.Counts) {
				s.Counts[i] = max(0, s.Counts[i]-os.Counts[i])
			}
		}
	}
	return &Hist{lo: h.lo, hi: h.hi, h: hdrhistogram.Import(s), min: math.MaxInt64, max: math.MinInt64}
}

// Merged returns a new histogram of lo … hi holding the counts of every
// histogram of hs (nil ones are skipped).
func Merged(lo, hi int64, hs ...*Hist) *Hist {
	m := New(lo, hi)
	for _, h := range hs {
		m.Merge(h)
	}
	return m
}

// Count is the number of values recorded; 0 for a nil histogram.
func (h *Hist) Count() int64 {
	if h == nil {
		return 0
	}
	return h.h.TotalCount()
}

// Quantile returns the value at quantile q in [0, 100] (to 3
// significant digits, between Min and Max); 0 when empty or nil.
func (h *Hist) Quantile(q float64) int64 {
	if h.Count() == 0 {
		return 0
	}
	v := h.h.ValueAtQuantile(q)
	if h.exact {
		v = min(max(v, h.min), h.max)
	}
	return v
}

// Min returns the smallest value recorded (0 when empty).
func (h *Hist) Min() int64 {
	switch {
	case h.Count() == 0:
		return 0
	case h.exact:
		return h.min
	}
	return h.h.Min()
}

// Max returns the largest value recorded (0 when empty): exactly, also
// beyond Hi, unless only its bucket is known.
func (h *Hist) Max() int64 {
	switch {
	case h.Count() == 0:
		return 0
	case h.exact:
		return h.max
	}
	return h.h.Max()
}

// Mean returns the mean of the values recorded (0 when empty).
func (h *Hist) Mean() float64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Mean()
}

// wire is the JSON form of a Hist: its bounds and the non-zero counts as
// index, count pairs (an empty latency histogram has some 50 000
// buckets); the exact extremes when known, and the count above hi.
type wire struct {
	Lo     int64      `json:"lo"`
	Hi     int64      `json:"hi"`
	Len    int        `json:"len"`
	Counts [][2]int64 `json:"counts"`
	Min    *int64     `json:"min,omitempty"`
	Max    *int64     `json:"max,omitempty"`
	Over   int64      `json:"over,omitempty"`
}

// MarshalJSON encodes h compactly: its bounds, its non-zero buckets, its
// exact extremes (when known) and the count above its bounds.
func (h *Hist) MarshalJSON() ([]byte, error) {
	s := h.h.Export()
	w := wire{Lo: h.lo, Hi: h.hi, Len: len(s.Counts), Counts: [][2]int64{}, Over: h.over}
	if h.exact && h.Count() > 0 {
		w.Min, w.Max = &h.min, &h.max
	}
	for i, c := range s.Counts {
		if c != 0 {
			w.Counts = append(w.Counts, [2]int64{int64(i), c})
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON wrote, refusing bounds or bucket
// indexes that do not fit.
func (h *Hist) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Lo < 1 || w.Hi <= w.Lo {
		return fmt.Errorf("histogram: bounds %d … %d", w.Lo, w.Hi)
	}
	n := New(w.Lo, w.Hi)
	s := n.h.Export()
	if w.Len != len(s.Counts) {
		return fmt.Errorf("histogram: %d buckets, want %d for bounds %d … %d", w.Len, len(s.Counts), w.Lo, w.Hi)
	}
	for _, p := range w.Counts {
		if p[0] < 0 || p[0] >= int64(len(s.Counts)) || p[1] < 0 {
			return fmt.Errorf("histogram: bucket %d count %d out of range", p[0], p[1])
		}
		s.Counts[p[0]] = p[1]
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	*h = Hist{lo: w.Lo, hi: w.Hi, h: hdrhistogram.Import(s), min: math.MaxInt64, max: math.MinInt64, over: max(w.Over, 0)}
	switch {
	case h.Count() == 0:
		h.exact = true
	case w.Min != nil && w.Max != nil && *w.Min <= *w.Max:
		h.min, h.max, h.exact = *w.Min, *w.Max, true
	}
	return nil
}

// Cumulative returns, for each bound of bounds (ns, ascending), how many
// values are at or below it, as a Prometheus histogram's buckets count
// them. A value counts by the lowest value of its histogram bucket, so a
// count is exact to the histogram's resolution (3 significant digits);
// values above the last bound are in Count only.
func (h *Hist) Cumulative(bounds []int64) []uint64 {
	out := make([]uint64, len(bounds))
	if h.Count() == 0 {
		return out
	}
	for _, b := range h.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		for i := len(bounds) - 1; i >= 0 && b.From <= bounds[i]; i-- {
			out[i] += uint64(b.Count)
		}
	}
	return out
}
