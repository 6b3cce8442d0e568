package job

import (
	"strings"
	"testing"
)

// A port pair's input errors are each one problem on the field at fault,
// with a fix, before anything opens.
func TestPairProblems(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Spec)
		field string
		want  string
	}{
		{"same port", func(s *Spec) { s.RxInterface = "lo" }, "rx_interface", "is the sending port"},
		{"gateway outside", func(s *Spec) { s.SrcIP, s.Gateway = "198.18.0.1/24", "198.19.0.254" }, "gateway", "outside the port's subnet 198.18.0.0/24"},
		{"no prefix", func(s *Spec) { s.SrcIP = "198.18.0.1" }, "src_ip", "has no prefix length"},
		{"gateway alone", func(s *Spec) { s.Gateway = "198.18.0.254" }, "gateway", "needs the port's own address"},
		{"rx field alone", func(s *Spec) { s.RxSrcIP = "198.19.0.1/24" }, "rx_src_ip", "applies to a port pair"},
		{"bidir alone", func(s *Spec) { s.Bidir = true }, "bidir", "applies to a port pair"},
		{"rx backend", func(s *Spec) { s.RxInterface, s.RxBackend = "eth9", "shm" }, "rx_backend", "does not receive on a network port"},
		{"no namespace", func(s *Spec) { s.Netns = "wpg-no-such-ns" }, "netns", "is not a network namespace"},
		{"family", func(s *Spec) { s.SrcIP = "2001:2:0:a::1/64" }, "src_ip", "is IPv6, and stream 0 (udp64) is IPv4"},
		{"mirror", func(s *Spec) {
			s.RxInterface, s.Bidir, s.TemplateText = "eth9", true, "streams: [{name: who, arp: {}}]\n"
		}, "bidir", `stream "who" cannot be mirrored`},
		{"payload", func(s *Spec) { s.Backend, s.Interface, s.RxInterface = "shm", "", "eth9" }, "rx_interface", "backend shm sends on none"},
	} {
		s := NewSpec()
		s.Interface = "lo"
		c.edit(&s)
		err := Validate(s, Env{})
		ps := AsProblems(err)
		if len(ps) == 0 {
			t.Errorf("%s: no problem", c.name)
			continue
		}
		p := ps[0]
		if p.Field != c.field || !strings.Contains(p.Error(), c.want) || p.Fix == "" && !strings.Contains(p.Error(), ";") {
			t.Errorf("%s: %s: %v; want %s: %q with a fix", c.name, p.Field, p, c.field, c.want)
		}
	}
}
