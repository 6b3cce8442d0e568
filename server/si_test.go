package server

import "testing"

// TestSIRoundsIntoNextPrefix: a figure that rounds up to 1000 of a prefix
// is written with the next prefix: a 1 kpps job (999.96 pps measured) was
// shown as "1e+03 pps" on the jobs and compare pages.
func TestSIRoundsIntoNextPrefix(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0 pps"},
		{0.5, "0.5 pps"},
		{999, "999 pps"},
		{999.4, "999 pps"},
		{999.96, "1 kpps"},
		{1000, "1 kpps"},
		{123456, "123 kpps"},
		{999_960, "1 Mpps"},
		{5.32e6, "5.32 Mpps"},
		{999_999_999, "1 Gpps"},
		{2.5e12, "2.5 Tpps"},
		{-999.96, "-1 kpps"},
	} {
		if got := si(tc.v, "pps"); got != tc.want {
			t.Errorf("si(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := fmtBits(511980.04); got != "512 kbit/s" {
		t.Errorf("fmtBits = %q", got)
	}
}
