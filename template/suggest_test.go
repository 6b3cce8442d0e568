package template

import "testing"

// TestSuggestTransposition: a typo that swaps two letters is one edit, so
// the suggestion is the field the user meant.
func TestSuggestTransposition(t *testing.T) {
	for _, c := range []struct {
		typo  string
		cands []string
		want  string
	}{
		{"ipv4.dts", []string{"ethernet.dst", "ipv4.ttl", "ipv4.src", "ipv4.dst", "udp.dst"}, "ipv4.dst"},
		{"lable", []string{"label", "tc", "ttl"}, "label"},
		{"mut", []string{"mtu", "id"}, "mtu"},
	} {
		if got := closest(c.typo, c.cands); got != c.want {
			t.Errorf("closest(%q) = %q, want %q", c.typo, got, c.want)
		}
	}
	for a, d := range map[[2]string]int{{"dts", "dst"}: 1, {"abc", "abc"}: 0, {"", "abc"}: 3, {"kitten", "sitting"}: 3, {"ca", "abc"}: 3} {
		if got := editDistance(a[0], a[1]); got != d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", a[0], a[1], got, d)
		}
	}
}
