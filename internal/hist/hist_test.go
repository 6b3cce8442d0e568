package hist

import (
	"slices"
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
	if m.Min() != 1 || m.Max() < 999_000_000 {
		t.Errorf("min %d max %d: want the clamped bounds", m.Min(), m.Max())
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
