package hdrlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wpg-dev/wpg/internal/hist"
)

// TestRoundTrip: a wpg histogram written as a log reads back, through
// hdrhistogram-go's own log reader, with the same counts and percentiles.
func TestRoundTrip(t *testing.T) {
	h := hist.New(1, 100_000_000_000)
	for i := int64(1); i <= 10000; i++ {
		h.Record(i * 100)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	hh, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	start := time.Unix(1_700_000_000, 0)
	if err := Write(&buf, hh, start, start.Add(10*time.Second), "lateness", "wpg send lateness (ns)"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "#wpg send lateness (ns)") {
		t.Fatalf("no comment:\n%s", buf.String())
	}
	r := hdrhistogram.NewHistogramLogReader(&buf)
	got, err := r.NextIntervalHistogram()
	if err != nil || got == nil {
		t.Fatalf("read back: %v, %v\n%s", got, err, buf.String())
	}
	if got.TotalCount() != h.Count() || got.ValueAtQuantile(99) != h.Quantile(99) {
		t.Fatalf("read back %d values, p99 %d; want %d, %d", got.TotalCount(), got.ValueAtQuantile(99), h.Count(), h.Quantile(99))
	}
	if _, err := Decode([]byte(`{"lo":0,"hi":5,"len":1,"counts":[]}`)); err == nil {
		t.Fatal("bad bounds decoded")
	}
}

// TestIntervals (issue #29): a log of several intervals reads back,
// through hdrhistogram-go's reader, as that many histograms at their
// times; Sub takes an earlier cumulative copy off a histogram.
func TestIntervals(t *testing.T) {
	var buf bytes.Buffer
	start := time.Unix(1_700_000_000, 0)
	l, err := NewLog(&buf, start, "wpg send lateness (ns), one histogram per interval")
	if err != nil {
		t.Fatal(err)
	}
	cum := hdrhistogram.New(1, 60_000_000_000, 3)
	var prev *hdrhistogram.Histogram
	for i := range 3 {
		for v := range int64(10 * (i + 1)) {
			_ = cum.RecordValue(1000 + v)
		}
		w := cum
		if prev != nil {
			w = Sub(cum, prev)
		}
		if w.TotalCount() != int64(10*(i+1)) {
			t.Fatalf("window %d: %d values, want %d", i, w.TotalCount(), 10*(i+1))
		}
		from := start.Add(time.Duration(i) * time.Second)
		if err := l.Interval(w, from, from.Add(time.Second), "lateness"); err != nil {
			t.Fatal(err)
		}
		prev = hdrhistogram.Import(cum.Export())
	}
	r := hdrhistogram.NewHistogramLogReader(&buf)
	for i := range 3 {
		h, err := r.NextIntervalHistogram()
		if err != nil || h == nil {
			t.Fatalf("interval %d: %v, %v\n%s", i, h, err, buf.String())
		}
		if h.TotalCount() != int64(10*(i+1)) || h.StartTimeMs() != start.Add(time.Duration(i)*time.Second).UnixMilli() || h.Tag() != "lateness" {
			t.Errorf("interval %d: %d values from %d (%q)", i, h.TotalCount(), h.StartTimeMs(), h.Tag())
		}
	}
	if h, _ := r.NextIntervalHistogram(); h != nil {
		t.Error("a fourth interval")
	}
}
