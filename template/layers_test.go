package template

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/header"
)

// newLayerExamples are the examples of issue #15's headers, with the
// checksums each stream asks to be bad.
var newLayerExamples = map[string]map[string][]string{
	"mpls":          nil,
	"gre":           nil,
	"vxlan":         nil,
	"geneve":        nil,
	"raw":           nil,
	"tcp-options":   nil,
	"syn-sweep":     nil,
	"bad-checksums": {"bad-ip": {"ipv4"}, "bad-udp": {"udp"}, "bad-tcp": {"tcp"}, "bad-icmp": {"icmp"}},
}

// tunnelTemplates are larger frames (KeepFrames and the delta prerender
// apply) with fields varying inside tunnels, sizes varying, checksums
// inside checksums.
var tunnelTemplates = map[string]string{
	"vxlan6-inner-fields": `
streams:
  - size: 400
    ipv6: {src: "2001:2::1", dst: "2001:2::2"}
    udp: {src: {from: 49152, to: 49200}}
    vxlan:
      vni: {from: 1, to: 3}
      inner:
        ethernet: {src: ["02:00:00:00:00:0a", "02:00:00:00:00:0b"]}
        ipv4: {src: 198.18.0.0/28, ttl: [64, 1]}
        udp: {src: {from: 1, to: 5}}
`,
	"gre-csum-sizes": `
streams:
  - size: {from: 142, to: 300, step: 7}
    ipv4: {}
    gre:
      checksum: true
      seq: {from: 0, to: 100}
      inner:
        ipv6: {src: "2001:2::/124"}
        tcp: {src: {from: 1, to: 9}, options: {mss: 1400, timestamps: true, tsval: {from: 5, to: 12}}}
`,
	"geneve-in-gre": `
streams:
  - size: 300
    ipv4: {}
    gre:
      key: {from: 7, to: 9}
      checksum: bad
      inner:
        ipv4: {dst: [198.19.0.1, 198.19.0.2]}
        udp: {checksum: right}
        geneve:
          vni: 9
          inner:
            ipv4: {id: {from: 0, to: 9}}
            icmp: {seq: [1, 2]}
`,
	"vxlan6-inner-ip-only": `
streams:
  - size: 280
    ipv6: {}
    udp: {}
    vxlan:
      inner:
        ipv4: {ttl: {from: 1, to: 9}, checksum: bad}
  - size: 190
    ipv6: {}
    udp: {}
    geneve:
      inner:
        ipv6: {hop_limit: [1, 2]}
        tcp: {checksum: bad, seq: {from: 1, to: 3}}
`,
	"mpls-fixed": `
streams:
  - size: 320
    mpls: [{label: 16}, {label: 17}, {label: 18, ttl: 1}]
    ipv6: {}
    udp: {}
`,
}

func tunnelSpecs(t *testing.T) map[string]*Spec {
	t.Helper()
	specs := map[string]*Spec{}
	for name := range newLayerExamples {
		specs[name] = mustLoad(t, "../examples/"+name+".wpg.yaml")
	}
	for name, y := range tunnelTemplates {
		s, err := Parse(name+".wpg.yaml", []byte(y))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specs[name] = s
	}
	return specs
}

// TestNewLayersPlansAgree: every example and tunnel template renders the
// same frames streamed, prerendered (whole frames or as a delta) and
// auto; every checksum verifies (walked header by header, tunnels and
// all) except those the template asks to be bad; frames kept in reused
// buffers are the same as fresh ones.
func TestNewLayersPlansAgree(t *testing.T) {
	for name, s := range tunnelSpecs(t) {
		t.Run(name, func(t *testing.T) {
			const n = 1500
			// --count bounds what is prerendered.
			a := render(t, s, CompileOptions{Plan: PlanStream, Count: n}, n, 77)
			b := render(t, s, CompileOptions{Plan: PlanPrerender, Count: n}, n, 77)
			c := render(t, s, CompileOptions{Plan: PlanAuto, PrerenderMaxBytes: 64 << 10}, n, 77)
			if len(a) != len(b) || len(a) != len(c) {
				t.Fatalf("frames: %d streamed, %d prerendered, %d auto", len(a), len(b), len(c))
			}
			bad := newLayerExamples[name]
			for k := range a {
				if !bytes.Equal(a[k], b[k]) || !bytes.Equal(a[k], c[k]) {
					t.Fatalf("frame %d differs between plans\nstream    %x\nprerender %x\nauto      %x", k, a[k], b[k], c[k])
				}
				var want []string
				if bad != nil {
					want = bad[s.Streams[streamOf(t, s, a[k])].Name]
				}
				if strings.Contains(name, "bad") && len(want) == 0 && s.Streams[streamOf(t, s, a[k])].Name != "no-udp-checksum" {
					t.Fatalf("frame %d: no bad checksum expected?", k)
				}
				switch name {
				case "geneve-in-gre":
					want = []string{"gre"}
				case "vxlan6-inner-ip-only":
					want = []string{"inner.ipv4", "inner.tcp"}
				}
				checkSums(t, a[k], want...)
			}
			if s.Streams[0].Size.Max() >= KeepMin {
				for _, plan := range []string{PlanStream, PlanPrerender} {
					keepSame(t, s, plan, 5)
				}
			}
		})
	}
}

// streamOf returns the stream index of frame f from its signature.
func streamOf(t *testing.T, s *Spec, f []byte) int {
	t.Helper()
	if len(s.Streams) == 1 {
		return 0
	}
	i := int(binary.BigEndian.Uint16(f[len(f)-18:]))
	if i >= len(s.Streams) {
		t.Fatalf("frame has stream id %d of %d", i, len(s.Streams))
	}
	return i
}

// TestNewLayersWorkers: worker i of 3 renders exactly the one-worker
// packets k ≡ i (mod 3) of each stream, but for the signature's worker
// count and the checksums covering it.
func TestNewLayersWorkers(t *testing.T) {
	byStream := func(s *Spec, frames [][]byte) map[int][][]byte {
		m := map[int][][]byte{}
		for _, f := range frames {
			i := streamOf(t, s, f)
			m[i] = append(m[i], f)
		}
		return m
	}
	for name, s := range tunnelSpecs(t) {
		one := byStream(s, render(t, s, CompileOptions{Plan: PlanStream}, 600, 5))
		for w := range 3 {
			for _, plan := range []string{PlanStream, PlanPrerender} {
				got := byStream(s, render(t, s, CompileOptions{Worker: w, Workers: 3, Plan: plan, Count: 300}, 100, 5))
				for st, frames := range got {
					for j, f := range frames {
						if k := w + 3*j; k < len(one[st]) && !sameTunnel(one[st][k], f) {
							t.Fatalf("%s: worker %d/3 (%s) stream %d packet %d differs\n%x\n%x", name, w, plan, st, k, f, one[st][k])
						}
					}
				}
			}
		}
	}
}

// sameTunnel: f equals one but for the signature's worker byte and
// checksum fields (which frameChecksums verifies on their own).
func sameTunnel(one, f []byte) bool {
	if len(one) != len(f) {
		return false
	}
	skip := map[int]bool{len(f) - 16: true}
	for _, c := range frameChecksums(&testing.T{}, f) {
		skip[c.field], skip[c.field+1] = true, true
	}
	for i := range f {
		if one[i] != f[i] && !skip[i] {
			return false
		}
	}
	return true
}

// TestLayerBytes pins the bytes of each new header against the RFCs.
func TestLayerBytes(t *testing.T) {
	frame0 := func(y string) []byte {
		s, err := Parse("t.wpg.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return render(t, s, CompileOptions{}, 1, 0)[0]
	}
	// MPLS: label 100, TC 5, S=0, TTL 64; label 200, S=1, TTL 1.
	f := frame0("streams: [{mpls: [{label: 100, tc: 5, ttl: 64}, {label: 200, ttl: 1}], ipv4: {}, udp: {}}]")
	if et := binary.BigEndian.Uint16(f[12:]); et != 0x8847 {
		t.Fatalf("EtherType %#x", et)
	}
	if got := fmt.Sprintf("%x", f[14:22]); got != "00064a40"+"000c8101" {
		t.Fatalf("MPLS stack %s", got)
	}
	// GRE with checksum, key and sequence: C K S bits, protocol 0x0800.
	f = frame0("streams: [{ipv4: {}, gre: {checksum: true, key: 0x01020304, seq: 9, inner: {ipv4: {}, udp: {}}}}]")
	g := f[34:]
	if f[23] != 47 || g[0] != 0xb0 || g[1] != 0 || binary.BigEndian.Uint16(g[2:]) != 0x0800 || binary.BigEndian.Uint32(g[8:]) != 0x01020304 || binary.BigEndian.Uint32(g[12:]) != 9 {
		t.Fatalf("GRE header % x", g[:16])
	}
	// GRE carrying Ethernet: protocol 0x6558.
	f = frame0("streams: [{ipv4: {}, gre: {inner: {ethernet: {}, ipv4: {}}}}]")
	if binary.BigEndian.Uint16(f[36:]) != 0x6558 || binary.BigEndian.Uint16(f[38+12:]) != 0x0800 {
		t.Fatalf("GRE/Ethernet % x", f[34:52])
	}
	// VXLAN: UDP 4789, no outer UDP checksum over IPv4, flags 0x08, VNI 0x123456.
	f = frame0("streams: [{ipv4: {}, udp: {}, vxlan: {vni: 0x123456, inner: {ipv4: {}, udp: {}}}}]")
	if binary.BigEndian.Uint16(f[36:]) != 4789 || binary.BigEndian.Uint16(f[40:]) != 0 || fmt.Sprintf("%x", f[42:50]) != "0800000012345600" {
		t.Fatalf("VXLAN % x", f[34:50])
	}
	// Geneve: UDP 6081, version 0, no options, protocol 0x6558, VNI 7.
	f = frame0("streams: [{ipv4: {}, udp: {}, geneve: {vni: 7}}]")
	if binary.BigEndian.Uint16(f[36:]) != 6081 || fmt.Sprintf("%x", f[42:50]) != "0000655800000700" {
		t.Fatalf("Geneve % x", f[34:50])
	}
	// TCP options as Linux sends them in a SYN: MSS, SACK permitted +
	// timestamps, NOP + window scale; data offset 10 words.
	f = frame0("streams: [{ipv4: {}, tcp: {options: {mss: 1460, sack_permitted: true, tsval: 0x11223344, tsecr: 0, wscale: 7}}}]")
	tcp := header.TCP(f[34:])
	if tcp.DataOffset() != 40 || fmt.Sprintf("%x", tcp[20:40]) != "020405b4"+"0402080a11223344"+"00000000"+"01030307" {
		t.Fatalf("TCP options: data offset %d, % x", tcp.DataOffset(), tcp[20:40])
	}
	f = frame0("streams: [{ipv4: {}, tcp: {options: {timestamps: true}}}]")
	if fmt.Sprintf("%x", f[54:66]) != "0101080a0000000100000000" {
		t.Fatalf("TCP timestamps alone: % x", f[54:66])
	}
	f = frame0("streams: [{ipv4: {}, tcp: {options: {sack_permitted: true}}}]")
	if fmt.Sprintf("%x", f[54:58]) != "01010402" {
		t.Fatalf("SACK permitted alone: % x", f[54:58])
	}
	// Bad checksums: the right value with the lowest bit flipped.
	good := frame0("streams: [{ipv4: {}, udp: {}}]")
	bad := frame0("streams: [{ipv4: {checksum: bad}, udp: {checksum: bad}}]")
	if good[24]^bad[24] != 0 || good[25]^bad[25] != 1 {
		t.Fatalf("IPv4 checksum %x, bad %x", good[24:26], bad[24:26])
	}
	if binary.BigEndian.Uint16(bad[40:]) != binary.BigEndian.Uint16(good[40:])+1 && !(binary.BigEndian.Uint16(good[40:]) == 0xffff && binary.BigEndian.Uint16(bad[40:]) == 1) {
		t.Fatalf("UDP checksum %x, bad %x", good[40:42], bad[40:42])
	}
	// Raw bytes, with the EtherType before them given.
	f = frame0(`streams: [{raw: [{after: ethernet, hex: "00640800", type: 0x8100}, {after: udp, hex: "abcd"}], ipv4: {}, udp: {}}]`)
	if fmt.Sprintf("%x", f[12:18]) != "810000640800" || f[18] != 0x45 || fmt.Sprintf("%x", f[46:48]) != "abcd" {
		t.Fatalf("raw layers % x", f[:50])
	}
	checkSums(t, f)
}

// TestBadSumInvertible: badSum is never the right value (nor its
// one's-complement twin), never 0 for UDP, and goodSum undoes it.
func TestBadSumInvertible(t *testing.T) {
	for x := range 1 << 16 {
		c := uint16(x)
		for _, udp := range []bool{false, true} {
			if udp && c == 0 {
				continue // a right UDP checksum is never 0
			}
			b := badSum(c, udp)
			if b == c || (b == 0 && c == 0xffff) || (b == 0xffff && c == 0) || (udp && b == 0) || goodSum(b, udp) != c {
				t.Fatalf("badSum(%#x, udp %v) = %#x", c, udp, b)
			}
		}
	}
}

// TestTupleOrder: the SYN sweep sends every port for each host, hosts in
// order, ports in order: the first tuple field varies slowest.
func TestTupleOrder(t *testing.T) {
	s := mustLoad(t, "../examples/syn-sweep.wpg.yaml")
	for _, plan := range plans {
		frames := render(t, s, CompileOptions{Plan: plan}, 1000, 0)
		if len(frames) != 762 {
			t.Fatalf("%s: %d frames, want 254 hosts × 3 ports", plan, len(frames))
		}
		seen := map[string]bool{}
		for k, f := range frames {
			ip := header.IPv4(f[14:])
			tcp := header.TCP(f[34:])
			host, port := int(ip.Dst()[3]), tcp.DstPort()
			if host != 1+k/3 || port != []uint16{22, 80, 443}[k%3] || ip.Dst()[2] != 1 {
				t.Fatalf("%s: frame %d to %v:%d, want 198.19.1.%d:%d", plan, k, ip.Dst(), port, 1+k/3, []uint16{22, 80, 443}[k%3])
			}
			seen[fmt.Sprint(host, port)] = true
			checkFrame(t, f)
		}
		if len(seen) != 762 {
			t.Fatalf("%d distinct (host, port) pairs", len(seen))
		}
	}
	// Three fields, workers: packet k of worker i is packet i+kW.
	s2, err := Parse("t.wpg.yaml", []byte("streams: [{ipv4: {src: [198.18.0.1, 198.18.0.2], dst: 198.19.0.0/30}, udp: {src: {from: 1, to: 5}, dst: [7, 8, 9]}, tuple: [udp.dst, ipv4.src, udp.src]}]"))
	if err != nil {
		t.Fatal(err)
	}
	if s2.Streams[0].UDP.Dst.Div != 10 || s2.Streams[0].IPv4.Src.Div != 5 || s2.Streams[0].UDP.Src.Div != 0 {
		t.Fatalf("Div %d %d %d", s2.Streams[0].UDP.Dst.Div, s2.Streams[0].IPv4.Src.Div, s2.Streams[0].UDP.Src.Div)
	}
	one := render(t, s2, CompileOptions{Plan: PlanStream}, 90, 0)
	for k, f := range one {
		dst := binary.BigEndian.Uint16(f[36:])
		src := binary.BigEndian.Uint16(f[34:])
		if int(dst) != 7+(k/10)%3 || f[29] != byte(1+(k/5)%2) || int(src) != 1+k%5 || f[33] != byte(1+k%2) {
			t.Fatalf("frame %d: src .%d:%d dst .%d:%d", k, f[29], src, f[33], dst)
		}
	}
	for w := range 4 {
		got := render(t, s2, CompileOptions{Worker: w, Workers: 4, Plan: PlanStream}, 20, 0)
		for j, f := range got {
			if !sameTunnel(one[w+4*j], f) {
				t.Fatalf("worker %d frame %d", w, j)
			}
		}
	}
}

// TestCIDR: prefixes are ranges of host addresses.
func TestCIDR(t *testing.T) {
	for _, c := range []struct {
		y        string
		from, to uint64
		kind     Kind
	}{
		{"198.18.1.0/29", 0xc6120101, 0xc6120106, Increment},
		{"198.18.1.0/24", 0xc6120101, 0xc61201fe, Increment},
		{"198.18.1.4/31", 0xc6120104, 0xc6120105, Increment},
		{"198.18.1.9/32", 0xc6120109, 0xc6120109, Fixed},
		{"198.18.0.0/15", 0xc6120001, 0xc613fffe, Increment},
		{"{from: 198.18.0.0/16, mode: random}", 0xc6120001, 0xc612fffe, Random},
		{"{from: 198.18.0.0/24, mode: decrement, step: 2}", 0xc6120001, 0xc61200fe, Decrement},
	} {
		s, err := Parse("t.wpg.yaml", []byte("streams: [{ipv4: {dst: "+c.y+"}}]"))
		if err != nil {
			t.Fatalf("%s: %v", c.y, err)
		}
		v := s.Streams[0].IPv4.Dst
		if v.From != c.from || v.To != c.to || v.Kind != c.kind {
			t.Errorf("%s: %v %#x..%#x, want %v %#x..%#x", c.y, v.Kind, v.From, v.To, c.kind, c.from, c.to)
		}
	}
	s, err := Parse("t.wpg.yaml", []byte(`streams: [{ipv6: {src: "2001:2::100/120"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Streams[0].IPv6.Src; v.Hi != ip6Hi || v.Lo.From != 0x101 || v.Lo.To != 0x1ff {
		t.Fatalf("IPv6 prefix %#x %+v", v.Hi, v.Lo)
	}
}

// TestNewLayerErrors: mistakes with the new layers name the place and
// the fix.
func TestNewLayerErrors(t *testing.T) {
	for _, c := range []struct{ name, yaml, want, fix string }{
		{"cidr host bits", "streams:\n  - ipv4: {dst: 198.18.1.5/24}\n", "bad.wpg.yaml:2:17: streams[0].ipv4.dst: 198.18.1.5/24 has host bits set", "198.18.1.0/24"},
		{"cidr ipv6 too wide", "streams:\n  - ipv6: {dst: \"2001:2::/48\"}\n", "bad.wpg.yaml:2:17: streams[0].ipv6.dst: 2001:2::/48 spans more than the lower 64 bits", "/64 or longer"},
		{"cidr in ipv4 of a v6 prefix", "streams:\n  - ipv4: {dst: \"2001:2::/120\"}\n", "bad.wpg.yaml:2:17: streams[0].ipv4.dst: \"2001:2::/120\" is not an IPv4 prefix", "198.18.1.0/24"},
		{"gre without ip", "streams:\n  - gre: {inner: {ipv4: {}}}\n", "bad.wpg.yaml:2:5: streams[0].gre: gre needs an IP layer", "protocol 47"},
		{"gre with udp", "streams:\n  - ipv4: {}\n    udp: {}\n    gre: {inner: {ipv4: {}}}\n", "bad.wpg.yaml:4:5: streams[0].gre: gre takes the place of udp/tcp/icmp", "gre.inner"},
		{"gre without inner", "streams:\n  - ipv4: {}\n    gre: {key: 1}\n", "bad.wpg.yaml:3:10: streams[0].gre.inner: gre needs an inner stack", "inner: {ipv4: {}, udp: {}}"},
		{"gre empty inner", "streams:\n  - ipv4: {}\n    gre: {inner: {}}\n", "bad.wpg.yaml:3:18: streams[0].gre.inner: the GRE inner stack is empty", "ipv4, ipv6, mpls, or ethernet"},
		{"gre checksum word", "streams:\n  - ipv4: {}\n    gre: {checksum: yes, inner: {ipv4: {}}}\n", "bad.wpg.yaml:3:21: streams[0].gre.checksum: \"yes\" is not a GRE checksum setting", "true (computed), bad"},
		{"vxlan without udp", "streams:\n  - ipv4: {}\n    vxlan: {vni: 1}\n", "bad.wpg.yaml:3:5: streams[0].vxlan: vxlan is carried in UDP", "dst defaults to 4789"},
		{"vxlan vni range", "streams:\n  - ipv4: {}\n    udp: {}\n    vxlan: {vni: 16777216}\n", "bad.wpg.yaml:4:18: streams[0].vxlan.vni: VNI 16777216 is out of range", "0..16777215"},
		{"inner vlan without ethernet in gre", "streams:\n  - ipv4: {}\n    gre: {inner: {vlan: {id: 5}, ipv4: {}}}\n", "bad.wpg.yaml:3:19: streams[0].gre.inner.vlan: VLAN tags need an Ethernet header", "add ethernet: {}"},
		{"inner unknown key", "streams:\n  - ipv4: {}\n    udp: {}\n    vxlan: {inner: {ipv5: {}}}\n", "bad.wpg.yaml:4:21: streams[0].vxlan.inner.ipv5: unknown key \"ipv5\" in streams[0].vxlan.inner", `did you mean "ipv4"?`},
		{"tunnels too deep", "streams:\n  - ipv4: {}\n    gre:\n      inner:\n        ipv4: {}\n        gre:\n          inner:\n            ipv4: {}\n            gre: {inner: {ipv4: {}}}\n", "bad.wpg.yaml:", "tunnels nest at most 2 deep"},
		{"mpls without label", "streams:\n  - mpls: [{ttl: 3}]\n    ipv4: {}\n", "bad.wpg.yaml:2:12: streams[0].mpls[0]: an MPLS entry needs a label", "label: 100"},
		{"mpls label range", "streams:\n  - mpls: [{label: 1048576}]\n", "bad.wpg.yaml:2:20: streams[0].mpls[0].label: MPLS label 1048576 is out of range", "0..1048575"},
		{"raw odd before headers", "streams:\n  - raw: [{after: ethernet, hex: \"abcdef\"}]\n    ipv4: {}\n", "bad.wpg.yaml:2:34: streams[0].raw[0].hex: 3 raw bytes (an odd number) before more headers", "make the length even"},
		{"raw after a missing layer", "streams:\n  - raw: [{after: udp, hex: \"ab\"}]\n    ipv4: {}\n", "bad.wpg.yaml:2:19: streams[0].raw[0].after: after: udp names no layer of this stack", "ethernet, ipv4"},
		{"raw bad hex", "streams:\n  - raw: [{after: ethernet, hex: \"xyz\"}]\n", "bad.wpg.yaml:2:34: streams[0].raw[0].hex: \"xyz\" is not hex bytes", "hex bytes"},
		{"raw type after udp", "streams:\n  - ipv4: {}\n    udp: {}\n    raw: [{after: udp, hex: \"ab\", type: 5}]\n", "bad.wpg.yaml:4:41: streams[0].raw[0].type: udp has no next-protocol field", "ethernet, vlan, ipv4, ipv6 or gre"},
		{"checksum word", "streams:\n  - ipv4: {checksum: wrong}\n", "bad.wpg.yaml:2:22: streams[0].ipv4.checksum: unknown checksum mode \"wrong\"", "right or bad"},
		{"checksum zero on tcp", "streams:\n  - ipv4: {}\n    tcp: {checksum: zero}\n", "bad.wpg.yaml:3:21: streams[0].tcp.checksum: unknown checksum mode \"zero\"", "right or bad"},
		{"udp zero over ipv6", "streams:\n  - ipv6: {}\n    udp: {checksum: zero}\n", "bad.wpg.yaml:3:21: streams[0].udp.checksum: UDP over IPv6 must carry a checksum", "right or bad"},
		{"tcp options empty", "streams:\n  - ipv4: {}\n    tcp: {options: {}}\n", "bad.wpg.yaml:3:11: streams[0].tcp.options: options: no option is turned on", "mss, wscale"},
		{"tcp wscale range", "streams:\n  - ipv4: {}\n    tcp: {options: {wscale: 15}}\n", "bad.wpg.yaml:3:29: streams[0].tcp.options.wscale: window scale 15 is out of range", "0..14"},
		{"tuple unknown field", "streams:\n  - ipv4: {}\n    udp: {}\n    tuple: [ipv4.dst, udp.dstt]\n", "bad.wpg.yaml:4:23: streams[0].tuple[1]: \"udp.dstt\" is not a field of this stream", `did you mean "udp.dst"?`},
		{"tuple random", "streams:\n  - ipv4: {}\n    udp: {src: {from: 1, to: 9, mode: random}}\n    tuple: [udp.src, ipv4.dst]\n", "bad.wpg.yaml:4:13: streams[0].tuple[0]: udp.src is random", "range or a list"},
		{"tuple twice", "streams:\n  - ipv4: {}\n    udp: {}\n    tuple: [udp.src, udp.src]\n", "bad.wpg.yaml:4:22: streams[0].tuple[1]: udp.src is in the tuple twice", "once"},
		{"tuple size", "streams:\n  - ipv4: {}\n    udp: {}\n    tuple: [size]\n", "bad.wpg.yaml:4:13: streams[0].tuple[0]: \"size\" is not a field of this stream", "size cannot be in a tuple"},
		{"tuple not a list", "streams:\n  - ipv4: {}\n    tuple: ipv4.dst\n", "bad.wpg.yaml:3:12: streams[0].tuple: tuple must be a list of field paths", "tuple: [ipv4.dst, tcp.dst]"},
		{"tuple too big", "streams:\n  - ipv4: {src: {from: 0.0.0.0, to: 255.255.255.254}, dst: {from: 0.0.0.0, to: 255.255.255.254}}\n    tuple: [ipv4.src, ipv4.dst]\n", "bad.wpg.yaml:3:12: streams[0].tuple: the tuple has more than 2^48 combinations", "narrow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.wpg.yaml", []byte(c.yaml))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, c.want) || !strings.Contains(msg, c.fix) || strings.Contains(msg, "\n") {
				t.Fatalf("got\n  %s\nwant it to start with\n  %s\nand contain %q", msg, c.want, c.fix)
			}
		})
	}
}

// TestFragments: each datagram of examples/fragments.wpg.yaml goes out as
// three fragments whose data, put back together, is the datagram: the
// UDP checksum and length are the whole datagram's, the signature ends
// the last fragment, offsets and more-fragments flags are right, and the
// identification counts per datagram. With 3 workers, worker i sends the
// datagrams k ≡ i (mod 3), all their fragments.
func TestFragments(t *testing.T) {
	s := mustLoad(t, "../examples/fragments.wpg.yaml")
	if _, err := Compile(s, CompileOptions{Plan: PlanPrerender}); err == nil || !strings.Contains(err.Error(), "fragments are cut") {
		t.Fatalf("--plan prerender: %v", err)
	}
	src, err := Compile(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if src.MaxFrame() != 1514 || !strings.Contains(src.detail, "streamed: fragments are cut") {
		t.Fatalf("max frame %d, plan %s", src.MaxFrame(), src.detail)
	}
	if n, _ := s.MaxUntagged(); n != 1514 {
		t.Fatalf("MaxUntagged %d: the MTU check must see the fragments", n)
	}
	check := func(frames [][]byte, workers, worker int) {
		t.Helper()
		for st := range 2 {
			for d := 0; 6*d+5 < len(frames); d++ {
				k := uint64(worker + workers*d)
				var whole []byte
				for j := range 3 {
					f := frames[6*d+2*j+st]
					if len(f) < 60 {
						t.Fatalf("fragment of %d bytes", len(f))
					}
					var data []byte
					if st == 0 {
						ip := header.IPv4(f[14:])
						if header.Checksum(f[14:34], 0) != 0 {
							t.Fatalf("fragment %d: IPv4 header checksum", j)
						}
						fo := binary.BigEndian.Uint16(ip[6:])
						if ip.ID() != uint16(k) || int(fo&0x1fff)*8 != 1480*j || (fo&0x2000 != 0) != (j < 2) || ip.DontFragment() || int(ip.TotalLength()) != len(f)-14 {
							t.Fatalf("stream 0 datagram %d fragment %d: id %d flags/offset %#x length %d", k, j, ip.ID(), fo, ip.TotalLength())
						}
						if j == 0 {
							whole = append(whole, f[:34]...)
						}
						data = f[34:]
					} else {
						ip := header.IPv6(f[14:])
						fh := f[54:62]
						fo := binary.BigEndian.Uint16(fh[2:])
						if ip.NextHeader() != 44 || fh[0] != header.ProtoUDP || binary.BigEndian.Uint32(fh[4:]) != 0x10000+uint32(k) || int(fo>>3)*8 != 1232*j || (fo&1 != 0) != (j < 2) || int(ip.PayloadLength()) != len(f)-54 {
							t.Fatalf("stream 1 datagram %d fragment %d: next %d, fragment header % x", k, j, ip.NextHeader(), fh)
						}
						if j == 0 {
							whole = append(whole, f[:54]...)
						}
						data = f[62:]
					}
					whole = append(whole, data...)
				}
				// The datagram put back together: as if sent whole.
				if st == 0 {
					ip := header.IPv4(whole[14:])
					ip.SetTotalLength(uint16(len(whole) - 14))
					binary.BigEndian.PutUint16(ip[6:], 0)
					ip.SetChecksum(0)
					ip.SetChecksum(ip.CalculateChecksum())
				} else {
					ip := header.IPv6(whole[14:])
					ip.SetNextHeader(header.ProtoUDP)
					ip.SetPayloadLength(uint16(len(whole) - 54))
				}
				if want := []int{3200, 3000}[st]; len(whole) != want {
					t.Fatalf("stream %d: reassembled %d bytes, want %d", st, len(whole), want)
				}
				checkSums(t, whole)
				sig, ok := frameSig(whole)
				if !ok || sig != [2]uint64{uint64(st), k} {
					t.Fatalf("stream %d datagram %d: signature %v %v", st, k, sig, ok)
				}
			}
		}
	}
	check(render(t, s, CompileOptions{}, 600, 9), 1, 0)
	// Fragments and whole frames of another stream through reused buffers.
	mixed, err := Parse("t.wpg.yaml", []byte("streams: [{size: 3200, ipv4: {fragment: {mtu: 1500}}, udp: {src: {from: 1, to: 7}}}, {size: 1400, ipv4: {}, udp: {src: {from: 1, to: 5}}}]"))
	if err != nil {
		t.Fatal(err)
	}
	for _, depth := range []int{1, 3, 7} {
		keepSame(t, mixed, PlanAuto, depth)
	}
	for w := range 3 {
		check(render(t, s, CompileOptions{Worker: w, Workers: 3}, 120, 9), 3, w)
	}
	// A count counts datagrams.
	s2, err := Parse("t.wpg.yaml", []byte("streams: [{count: 5, size: 3020, ipv4: {fragment: {mtu: 1500}}, udp: {}}]"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(render(t, s2, CompileOptions{}, 100, 0)); n != 15 {
		t.Fatalf("count 5: %d frames, want 5 datagrams × 3 fragments", n)
	}
}

// frameSig returns the stream and sequence of f's signature.
func frameSig(f []byte) ([2]uint64, bool) {
	sig := f[len(f)-20:]
	if binary.BigEndian.Uint16(sig) != 0x5750 {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(binary.BigEndian.Uint16(sig[2:])), binary.BigEndian.Uint64(sig[4:]) & (1<<56 - 1)}, true
}

// TestFragmentErrors: a fragmented stream that cannot be cut says why.
func TestFragmentErrors(t *testing.T) {
	for _, c := range []struct{ name, yaml, want, fix string }{
		{"no mtu", "streams:\n  - size: 3000\n    ipv4: {fragment: {}}\n", "bad.wpg.yaml:3:12: streams[0].ipv4.fragment: fragment needs an mtu", "mtu: 1500"},
		{"mtu too small", "streams:\n  - size: 3000\n    ipv6: {fragment: {mtu: 50}}\n", "bad.wpg.yaml:3:28: streams[0].ipv6.fragment.mtu: an MTU of 50 leaves no room", "at least 56"},
		{"df", "streams:\n  - size: 3000\n    ipv4: {df: true, fragment: {mtu: 1500}}\n", "bad.wpg.yaml:3:16: streams[0].ipv4.df: df: true forbids the fragments", "remove df"},
		{"ipv4 id", "streams:\n  - size: 3000\n    ipv4: {fragment: {mtu: 1500, id: 5}}\n", "bad.wpg.yaml:3:38: streams[0].ipv4.fragment.id: IPv4 fragments carry ipv4.id", "ipv4.id"},
		{"one fragment", "streams:\n  - size: 1000\n    ipv4: {fragment: {mtu: 1500}}\n    udp: {}\n", "bad.wpg.yaml:3:28: streams[0].ipv4.fragment.mtu: the 986-byte datagram (a 1000-byte frame) fits in one packet", "raise size above 1514"},
		{"varying size", "streams:\n  - size: [3000, 4000]\n    ipv4: {fragment: {mtu: 1500}}\n", "bad.wpg.yaml:2:11: streams[0].size: a fragmented stream has one frame size", "size: 3000"},
		{"short last fragment", "streams:\n  - size: 3000\n    ipv4: {fragment: {mtu: 1500}}\n    udp: {}\n", "bad.wpg.yaml:2:11: streams[0].size: the last fragment would be a 40-byte frame with 6 bytes of data", "use a size of 3020"},
		{"inner fragment", "streams:\n  - size: 3000\n    ipv4: {}\n    gre: {inner: {ipv4: {fragment: {mtu: 1400}}}}\n", "bad.wpg.yaml:4:", "move fragment to the outer ipv4/ipv6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.wpg.yaml", []byte(c.yaml))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, c.want) || !strings.Contains(msg, c.fix) {
				t.Fatalf("got\n  %s\nwant it to start with\n  %s\nand contain %q", msg, c.want, c.fix)
			}
		})
	}
}
