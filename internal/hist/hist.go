// Package hist is the one nanosecond histogram of wpg: the pacer's
// lateness (package pace) and the receiver's one-way latency (package
// recv) record into it, and per-worker or per-receiver histograms merge
// with the same code, so percentiles of a merged run come from the merged
// counts, never from averaged percentiles. It is an HDR histogram with 3
// significant digits; recording allocates nothing.
package hist

import "github.com/HdrHistogram/hdrhistogram-go"

// Hist counts values (ns) in [Lo, Hi]; a value outside is counted at the
// nearer bound.
type Hist struct {
	lo, hi int64
	h      *hdrhistogram.Histogram
}

// New returns an empty histogram of values from lo to hi (lo ≥ 1).
func New(lo, hi int64) *Hist {
	return &Hist{lo: lo, hi: hi, h: hdrhistogram.New(lo, hi, 3)}
}

// Record counts v.
func (h *Hist) Record(v int64) {
	_ = h.h.RecordValue(min(max(v, h.lo), h.hi))
}

// Merge adds the counts of o (nil adds nothing).
func (h *Hist) Merge(o *Hist) {
	if o != nil {
		h.h.Merge(o.h)
	}
}

// Clone returns a copy that later records to h do not change.
func (h *Hist) Clone() *Hist {
	c := New(h.lo, h.hi)
	c.Merge(h)
	return c
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

// Quantile returns the value at quantile q in [0, 100]; 0 when empty or nil.
func (h *Hist) Quantile(q float64) int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.ValueAtQuantile(q)
}

// Min returns the smallest value recorded (0 when empty).
func (h *Hist) Min() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Min()
}

// Max returns the largest value recorded (0 when empty).
func (h *Hist) Max() int64 {
	if h.Count() == 0 {
		return 0
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
