package template

import (
	"errors"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

func TestMirror(t *testing.T) {
	spec, err := Parse("m.wpg.yaml", []byte(`streams:
  - name: a
    ethernet: {src: "02:00:00:00:00:0a", dst: "02:00:00:00:00:0b"}
    ipv4: {src: 198.18.0.1, dst: {from: 198.19.0.1, to: 198.19.0.9}}
    udp: {src: 1000, dst: 2000}
  - name: b
    ipv6: {src: "2001:2:0:a::1", dst: "2001:2:0:b::1"}
    tcp: {src: 3000, dst: 80}
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Mirror(spec)
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.Streams[0], m.Streams[1]
	if a.Ethernet.Src.From != 0x02000000000b || a.IPv4.Src.Kind != Increment || a.IPv4.Dst.From != 0xc6120001 || a.UDP.Src.From != 2000 || a.UDP.Dst.From != 1000 {
		t.Fatalf("mirrored a: %+v %+v %+v", a.Ethernet, a.IPv4, a.UDP)
	}
	if b.IPv6.Src.Lo.From != 1 || b.IPv6.Src.Hi != spec.Streams[1].IPv6.Dst.Hi || b.TCP.Src.From != 80 || b.TCP.Dst.From != 3000 {
		t.Fatalf("mirrored b: %+v %+v", b.IPv6, b.TCP)
	}
	// The original is untouched.
	if o := spec.Streams[0]; o.IPv4.Src.From != 0xc6120001 || o.UDP.Src.From != 1000 {
		t.Fatalf("the original changed: %+v", o.IPv4)
	}
	// A reverse: list replaces the mirror.
	spec, err = Parse("r.wpg.yaml", []byte("streams: [{ipv4: {}, udp: {}}]\nreverse: [{name: back, ipv4: {src: 198.19.0.1, dst: 198.18.0.1}, udp: {dst: 7}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err = Mirror(spec); err != nil || len(m.Streams) != 1 || m.Streams[0].Name != "back" || m.Streams[0].UDP.Dst.From != 7 {
		t.Fatalf("reverse: %v %+v", err, m)
	}
	// ARP has no mirror.
	spec, err = Parse("arp.wpg.yaml", []byte("streams: [{name: who, arp: {}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Mirror(spec)
	var te *Error
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "who") || !strings.Contains(err.Error(), "reverse:") {
		t.Fatalf("ARP mirrored: %v", err)
	}
}

func TestPorts(t *testing.T) {
	spec, err := Parse("p.wpg.yaml", []byte("ports:\n  tx: {src_ip: 198.18.0.1/24, gateway: 198.18.0.254}\n  rx: {src_ip: 2001:2:0:b::1/64}\nstreams: [{ipv4: {}, udp: {}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := spec.Ports; p == nil || p.TX.String() != "198.18.0.1/24 via 198.18.0.254" || p.RX.String() != "2001:2:0:b::1/64" {
		t.Fatalf("ports: %+v", spec.Ports)
	}
	for _, c := range []struct{ yaml, want string }{
		{"ports:\n  tx: {src_ip: 198.18.0.1, gateway: 198.18.0.254}\n", `p.wpg.yaml:2:16: ports.tx.src_ip: "198.18.0.1" has no prefix length`},
		{"ports:\n  rx: {gateway: 198.18.0.254}\n", "ports.rx: a port needs its address"},
		{"ports:\n  tx: {src_ip: 198.18.0.1/24, gateway: 198.19.0.254}\n", "2:40: ports.tx.gateway: \"198.19.0.254\" is outside the port's subnet"},
		{"ports:\n  tx: {src_ip: 198.18.0.1/24, gw: 198.18.0.254}\n", "gw"},
	} {
		_, err := Parse("p.wpg.yaml", []byte(c.yaml+"streams: [{ipv4: {}, udp: {}}]\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}

// A stream base signs the streams from it, and the source still finds
// each stream's settings (a timed template's schedule).
func TestStreamBase(t *testing.T) {
	spec, err := Parse("b.wpg.yaml", []byte("streams:\n  - {rate: 1kpps, ipv4: {}, udp: {}}\n  - {rate: 2kpps, ipv4: {}, udp: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{StreamBase: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bufs, lens := [][]byte{make([]byte, 2048), make([]byte, 2048)}, make([]int, 2)
	seen := map[uint16]bool{}
	for range 4 {
		n := src.Render(bufs, lens, 0)
		for i := range n {
			sig, ok := frame.ParseSignature(bufs[i][:lens[i]])
			if !ok {
				t.Fatalf("frame %d has no signature", i)
			}
			seen[sig.Stream] = true
		}
	}
	if !seen[100] || !seen[101] || len(seen) != 2 {
		t.Fatalf("stream ids %v, want 100 and 101", seen)
	}
	if _, err := Compile(spec, CompileOptions{StreamBase: 65535}); err == nil {
		t.Fatal("streams past id 65535 compiled")
	}
}
