package printable

import "testing"

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"udp64", "udp64"},
		{"café ☕ 流", "café ☕ 流"},
		{`C:\path`, `C:\path`},
		{"a\x1b[31mred", `a\x1b[31mred`},
		{"bell\a", `bell\a`},
		{"nul\x00end", `nul\x00end`},
		{"tab\tnl\ncr\r", `tab\tnl\ncr\r`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b", `c1\u009b`},
		{"rtl\u202eexe", `rtl\u202eexe`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"", ""},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEscapeNoAllocPrintable(t *testing.T) {
	s := "a perfectly ordinary stream name"
	if n := testing.AllocsPerRun(100, func() { _ = Escape(s) }); n != 0 {
		t.Errorf("Escape of printable text allocates %v times", n)
	}
}
