package html

import (
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/report"
)

// TestSIRoundsIntoTheNextPrefix: a figure that rounds to 1000 of its
// prefix at three significant digits is written with the next one (a
// run at 999,890 pps reads 1 Mpps), never in Go's exponent form
// (1e+03 kpps, which the summary, the streams and the workers showed).
func TestSIRoundsIntoTheNextPrefix(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{999889.6755, "pps", "1 Mpps"},
		{999.6, "", "1 k"},
		{999.4, "", "999"},
		{-999999, "pps", "-1 Mpps"},
		{12_500_000, "pps", "12.5 Mpps"},
		{0, "pps", "0 pps"},
		{999_999_999, "bit/s", "1 Gbit/s"},
		// Durations in Go's form, as the page's tables and the text
		// reports write them (TestDurationsReadOneWay).
		{999.7, "ns", "1µs"},
		{999_999, "ns", "1ms"},
		{999_999_999, "ns", "1s"},
		{1500, "ns", "1.5µs"},
		{20_531, "ns", "20.5µs"},
		{14, "ns", "14ns"},
		{0, "ns", "0s"},
		{0.5, "ns", "0.5ns"},
	} {
		if got := si(c.v, c.unit); got != c.want {
			t.Errorf("si(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

// TestTimelineLatencyGaps: an interval in which no frame's latency was
// measured (nothing arrived: the receiver's first periods, a stall) is a
// gap in the latency chart, not a latency of 0 ns drawn along the axis.
func TestTimelineLatencyGaps(t *testing.T) {
	ivs := []report.Interval{
		{Start: 0, End: 1, PPS: 0},
		{Start: 1, End: 2, PPS: 1000, LatencyP99Ns: 20_000},
		{Start: 2, End: 3, PPS: 0},
		{Start: 3, End: 4, PPS: 1000, LatencyP99Ns: 10_000},
	}
	var lat string
	for _, c := range timeline(ivs, 0) {
		if strings.Contains(string(c), "one-way latency p99") {
			lat = string(c)
		}
	}
	if lat == "" {
		t.Fatal("no latency chart")
	}
	// The x axis runs from 72 (0 s) to 744 (4 s): 168 a second; y 220 is 0 ns.
	if strings.Contains(lat, ",220.0") {
		t.Errorf("the latency chart draws a point at 0 ns:\n%s", lat)
	}
	if n := strings.Count(lat, `<polyline`); n != 2 {
		t.Errorf("%d lines in the latency chart, want 2 (one a measured interval, split by the one without):\n%s", n, lat)
	}
}
