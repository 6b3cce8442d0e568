package job

import (
	"net"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/template"
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

// A port fills the streams as a run sends them: the port's MAC as the
// source, the gateway's as the destination, a fixed source address of
// the port's family its own; a varying one stays.
func TestFillPort(t *testing.T) {
	spec, err := template.Parse("p.wpg.yaml", []byte(`streams:
  - {ipv4: {src: 198.18.0.7, dst: 198.19.0.1}, udp: {}}
  - {ipv4: {src: {from: 198.18.0.10, to: 198.18.0.20}, dst: 198.19.0.1}, udp: {}}
  - {ipv6: {src: "2001:2::5", dst: "2001:2:0:b::1"}, udp: {}}
`))
	if err != nil {
		t.Fatal(err)
	}
	mac, gw := net.HardwareAddr{2, 0, 0, 0, 0, 0xa}, net.HardwareAddr{2, 0, 0, 0, 0, 0xfe}
	if err := FillPort(spec, mac, gw, "198.18.0.1/24"); err != nil {
		t.Fatal(err)
	}
	for i, st := range spec.Streams {
		if st.Ethernet.Src.From != 0x02000000000a || st.Ethernet.Dst.From != 0x0200000000fe {
			t.Errorf("stream %d: MACs %x → %x", i, st.Ethernet.Src.From, st.Ethernet.Dst.From)
		}
	}
	if s := spec.Streams[0].IPv4.Src; s.Kind != template.Fixed || s.From != 0xc6120001 {
		t.Errorf("fixed source %x, want the port's 198.18.0.1", s.From)
	}
	if s := spec.Streams[1].IPv4.Src; s.Kind != template.Increment || s.From != 0xc612000a {
		t.Errorf("a varying source changed: %+v", s)
	}
	if s := spec.Streams[2].IPv6.Src; s.Lo.From != 5 {
		t.Errorf("an IPv6 source took an IPv4 port's address: %+v", s)
	}
	if err := FillPort(spec, mac, nil, "198.18.0.1"); err == nil {
		t.Error("an address without a prefix filled the frames")
	}
}
