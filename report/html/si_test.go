package html

import "testing"

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
		{999.7, "ns", "1 µs"},
		{999_999, "ns", "1 ms"},
		{999_999_999, "ns", "1 s"},
		{1500, "ns", "1.5 µs"},
		{14, "ns", "14 ns"},
	} {
		if got := si(c.v, c.unit); got != c.want {
			t.Errorf("si(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
