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
	p, err := Rate("r", []report.Interval{{Start: 0, End: 1, PPS: 94e3}, {Start: 1, End: 2, PPS: 95e3}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max <= 95e3*1.1 {
		t.Errorf("Y max %v: want headroom above the highest rate, 95000", p.Y.Max)
	}
}
