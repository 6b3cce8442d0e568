package hist

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"
)

func TestMergeKeepsCounts(t *testing.T) {
	a, b := New(1, 1e9), New(1, 1e9)
	for i := int64(1); i <= 100; i++ {
		a.Record(i * 1000)
	}
	for i := int64(1); i <= 100; i++ {
		b.Record(i * 1e6)
	}
	b.Record(-5)   // counted at the low bound
	b.Record(1e12) // counted at the high bound
	m := Merged(1, 1e9, a, nil, b)
	if m.Count() != 202 {
		t.Fatalf("merged count %d, want 202", m.Count())
	}
	if p := m.Quantile(50); p < 99_000 || p > 101_000 {
		t.Errorf("merged p50 = %d, want about 100 µs (the top of a)", p)
	}
	// Min and Max are the values recorded, not the bounds they were
	// counted at (issue #29: a latency max read 100 s, the bound, for a
	// frame 2704 s old); Over says how many went beyond the range.
	if m.Min() != -5 || m.Max() != 1e12 || m.Over() != 1 {
		t.Errorf("min %d max %d over %d: want the values recorded, -5 and 1e12, one over", m.Min(), m.Max(), m.Over())
	}
	c := a.Clone()
	a.Record(5)
	if c.Count() != 100 || a.Count() != 101 {
		t.Errorf("clone shares counts: %d, %d", c.Count(), a.Count())
	}
	var none *Hist
	if none.Count() != 0 || none.Quantile(99) != 0 || New(1, 10).Mean() != 0 {
		t.Error("empty histograms must read as zero")
	}
}

func TestRecordAllocatesNothing(t *testing.T) {
	h := New(1, 60e9)
	if n := testing.AllocsPerRun(1000, func() { h.Record(12345) }); n != 0 {
		t.Fatalf("Record allocates %v times", n)
	}
}

// Sub gives the values recorded between two cumulative copies.
func TestSub(t *testing.T) {
	h := New(1, 1_000_000)
	for v := int64(1); v <= 100; v++ {
		h.Record(v)
	}
	before := h.Clone()
	for v := int64(1000); v < 1100; v++ {
		h.Record(v)
	}
	d := h.Sub(before)
	if d.Count() != 100 || d.Min() < 999 || d.Max() > 1101 {
		t.Fatalf("window: %d values from %d to %d, want 100 from 1000 to 1099", d.Count(), d.Min(), d.Max())
	}
	if all := h.Sub(nil); all.Count() != 200 {
		t.Fatalf("less nothing: %d values, want 200", all.Count())
	}
	if neg := before.Sub(h); neg.Count() != 0 {
		t.Fatalf("an earlier copy less a later one: %d values, want 0", neg.Count())
	}
	h.Reset()
	if h.Count() != 0 {
		t.Fatal("Reset left values")
	}
}

// Frozen hands out one copy per change: the same one while no values came
// in, a new one after, and never the histogram itself.
func TestFrozen(t *testing.T) {
	var f Frozen
	if f.Of(nil) != nil {
		t.Fatal("a nil histogram gave a copy")
	}
	h := New(1, 1000)
	h.Record(5)
	a := f.Of(h)
	if a == h || a.Count() != 1 || f.Of(h) != a {
		t.Fatalf("first copy %p (h %p), count %d, again %p", a, h, a.Count(), f.Of(h))
	}
	h.Record(7)
	b := f.Of(h)
	if b == a || b.Count() != 2 || a.Count() != 1 {
		t.Fatalf("after a value: copy %p (was %p), counts %d and %d", b, a, b.Count(), a.Count())
	}
}

func TestCumulative(t *testing.T) {
	h := New(1, 100_000_000_000)
	for _, v := range []int64{500, 1000, 1000, 1500, 2_000_000, 3_000_000_000} {
		h.Record(v)
	}
	got := h.Cumulative([]int64{999, 1000, 1_990_000, 2_002_000, 1_000_000_000})
	want := []uint64{1, 3, 4, 5, 5}
	if !slices.Equal(got, want) {
		t.Fatalf("Cumulative = %v, want %v", got, want)
	}
	if got := (*Hist)(nil).Cumulative([]int64{1, 2}); !slices.Equal(got, []uint64{0, 0}) {
		t.Fatalf("nil: %v", got)
	}
}

// TestExtremesAreExact (issue #29): Max is the largest value recorded, not
// the top of its bucket (3 significant digits: 1.3 s off at 45 minutes)
// nor the range's bound, also after a merge and a JSON round trip, and
// no quantile lies outside Min … Max.
func TestExtremesAreExact(t *testing.T) {
	const big = 2_704_554_505_801 // a replayed capture's frame, 45 minutes old
	h := New(1, math.MaxInt64)
	h.Record(2_000)
	h.Record(big)
	if h.Max() != big || h.Quantile(100) != big || h.Quantile(99) > big || h.Over() != 0 {
		t.Fatalf("max %d p100 %d p99 %d over %d, want %d", h.Max(), h.Quantile(100), h.Quantile(99), h.Over(), int64(big))
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Hist
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	m := Merged(1, math.MaxInt64, &back, New(1, math.MaxInt64))
	if back.Max() != big || back.Min() != 2_000 || m.Max() != big || m.Min() != 2_000 {
		t.Errorf("after JSON: max %d min %d; merged: max %d min %d", back.Max(), back.Min(), m.Max(), m.Min())
	}
	// A histogram of narrower bounds merged into a wider one keeps its
	// values, and one of wider bounds into a narrower one counts those
	// beyond at the bound, in Over.
	small := New(1, 100_000_000_000)
	small.Merge(h)
	if small.Count() != 2 || small.Over() != 1 || small.Max() != big || small.Quantile(100) < 100_000_000_000 {
		t.Errorf("wide into narrow: count %d over %d max %d p100 %d", small.Count(), small.Over(), small.Max(), small.Quantile(100))
	}
	// A window known by its buckets only reads them.
	w := h.Sub(nil)
	if w.Max() < big || w.Max() > big+big/1000 {
		t.Errorf("window max %d, want within 0.1 %% of %d", w.Max(), int64(big))
	}
	var old Hist // a histogram written without its extremes
	if err := json.Unmarshal([]byte(`{"lo":1,"hi":1000,"len":`+strconv.Itoa(len(New(1, 1000).h.Export().Counts))+`,"counts":[[10,1]]}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Max() != 10 || old.Min() != 10 {
		t.Errorf("a histogram without extremes: min %d max %d, want its bucket's 10", old.Min(), old.Max())
	}
	h.Reset()
	if h.Max() != 0 || h.Over() != 0 {
		t.Errorf("reset: max %d over %d", h.Max(), h.Over())
	}
	h.Record(7)
	if h.Max() != 7 || h.Min() != 7 {
		t.Errorf("after reset: min %d max %d, want 7", h.Min(), h.Max())
	}
}
