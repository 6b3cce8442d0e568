package job

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/nexthop"
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

// A port's VLAN tags are those of the streams that leave it (B's: the
// streams mirrored, their tags as they are), one tag or QinQ; streams of
// different tags on one port, or a varying VLAN id, are one problem on
// the port naming the stacks and the fix.
func TestPortVLANTags(t *testing.T) {
	spec := func(streams string) Spec {
		s := NewSpec()
		s.Interface, s.SrcIP, s.Gateway = "lo", "198.18.1.1/24", "198.18.1.254"
		s.RxInterface, s.RxSrcIP = "eth9", "198.19.1.1/24"
		s.TemplateText = "streams:\n" + streams
		return s
	}
	qinq := []nexthop.Tag{{TPID: 0x88a8, ID: 10}, {TPID: 0x8100, ID: 100}}
	for _, c := range []struct {
		name, streams string
		want          []nexthop.Tag
	}{
		{"untagged", "  - {ipv4: {dst: 198.19.1.1}, udp: {}}\n", nil},
		{"vlan", "  - {vlan: {id: 100, pcp: 3}, ipv4: {dst: 198.19.1.1}, udp: {}}\n  - {vlan: {id: 100}, ipv4: {dst: 198.19.1.2}, udp: {}}\n",
			[]nexthop.Tag{{TPID: 0x8100, ID: 100}}},
		{"qinq", "  - {qinq: {outer: {id: 10}, inner: {id: 100}}, ipv4: {dst: 198.19.1.1}, udp: {}}\n", qinq},
	} {
		pr, err := prepare(spec(c.streams), Env{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, pl := range []portPlan{pr.pair.tx, pr.pair.rx} {
			if !slices.Equal(pl.tags, c.want) {
				t.Errorf("%s: port %s: tags %s, want %s", c.name, pl.iface, nexthop.FormatTags(pl.tags), nexthop.FormatTags(c.want))
			}
		}
	}
	for _, c := range []struct {
		name, streams string
		want          []string
	}{
		{"two VLANs", "  - {name: a, vlan: {id: 100}, ipv4: {dst: 198.19.1.1}, udp: {}}\n  - {name: b, vlan: {id: 200}, ipv4: {dst: 198.19.1.1}, udp: {}}\n",
			[]string{"stream 0 (a) 802.1Q 100, stream 1 (b) 802.1Q 200", "one VLAN per port", "destination MAC"}},
		{"tagged and not", "  - {name: a, vlan: {id: 100}, ipv4: {dst: 198.19.1.1}, udp: {}}\n  - {name: b, ipv4: {dst: 198.19.1.1}, udp: {}}\n",
			[]string{"stream 0 (a) 802.1Q 100, stream 1 (b) untagged"}},
		{"QinQ and 802.1Q", "  - {name: a, qinq: {outer: {id: 10}, inner: {id: 100}}, ipv4: {dst: 198.19.1.1}, udp: {}}\n  - {name: b, vlan: {id: 100}, ipv4: {dst: 198.19.1.1}, udp: {}}\n",
			[]string{"802.1ad 10 + 802.1Q 100", "stream 1 (b) 802.1Q 100"}},
		{"varying id", "  - {name: a, vlan: {id: {from: 100, to: 103}}, ipv4: {dst: 198.19.1.1}, udp: {}}\n",
			[]string{"stream 0 (a) varies its VLAN id (vlan.id)"}},
	} {
		ps := AsProblems(Validate(spec(c.streams), Env{}))
		if len(ps) != 2 || ps[0].Field != "interface" || ps[0].Value != "lo" || ps[1].Field != "rx_interface" || ps[1].Value != "eth9" {
			t.Errorf("%s: problems %v; want one on each port", c.name, ps)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(ps[0].Error(), w) {
				t.Errorf("%s: %q, want %q in it", c.name, ps[0].Error(), w)
			}
		}
	}
	// Without a port address nothing is resolved: the streams' MACs are
	// the template's, whatever their tags.
	s := spec("  - {vlan: {id: 100}, ipv4: {dst: 198.19.1.1}, udp: {}}\n  - {vlan: {id: 200}, ipv4: {dst: 198.19.1.1}, udp: {}}\n")
	s.SrcIP, s.Gateway, s.RxSrcIP = "", "", ""
	if err := Validate(s, Env{}); err != nil {
		t.Errorf("two VLANs without port addresses: %v", err)
	}
}
