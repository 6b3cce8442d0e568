package chart

import (
	"testing"

	"github.com/wpg-dev/wpg/report"
)

// TestTickLabels: axis ticks read as round numbers with an SI prefix,
// without the three decimals of a report's figures.
func TestTickLabels(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 30e6: "30 M", 2500: "2.5 k", 80e3: "80 k", 1.25e9: "1.25 G", 0.5: "0.5", 12: "12"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestRateHeadroom: the rate line stays below the top of the plot (the
// legend's corner), instead of running along the frame.
func TestRateHeadroom(t *testing.T) {
	ps, err := Timeline("r", []Series{{Intervals: []report.Interval{{Start: 0, End: 1, PPS: 94e3}, {Start: 1, End: 2, PPS: 95e3}}}})
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if p.Y.Max <= 95e3*1.1 {
		t.Errorf("Y max %v: want headroom above the highest rate, 95000", p.Y.Max)
	}
}

// TestDurTicks: a latency axis (nanoseconds) reads as durations.
func TestDurTicks(t *testing.T) {
	var labels []string
	for _, tk := range (durTicks{}).Ticks(0, 3e6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if len(labels) == 0 || labels[len(labels)-1] != "3ms" {
		t.Errorf("ticks of 0–3 ms: %q, want durations ending in 3ms", labels)
	}
}

// TestRoundDur: a percentile's label has three significant digits.
func TestRoundDur(t *testing.T) {
	for ns, want := range map[float64]string{1569791: "1.57ms", 5392: "5.39µs", 999: "999ns", 19906559: "19.9ms", 9000: "9µs", 0: "0s"} {
		if got := roundDur(ns); got != want {
			t.Errorf("roundDur(%v) = %q, want %q", ns, got, want)
		}
	}
}
