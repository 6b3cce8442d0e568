package template

import "testing"

// BenchmarkRenderLayers measures Render of the issue #15 headers: VXLAN
// over IPv4 (inner fields varying, no outer UDP checksum) and over IPv6
// (the outer UDP checksum covering the inner frame), GRE with checksum,
// key and sequence (two checksums a frame), IPv4 fragments (each datagram
// rendered whole, then cut) and the SYN sweep tuple, streamed and (where
// the stream allows it) prerendered.
func BenchmarkRenderLayers(b *testing.B) {
	for _, c := range []struct{ name, yaml string }{
		{"vxlan4", "streams: [{size: 148, ipv4: {}, udp: {src: {from: 49152, to: 49161}}, vxlan: {vni: [1, 2], inner: {vlan: {id: 30}, ipv4: {}, udp: {src: {from: 10000, to: 10009}}}}}]"},
		{"vxlan6", "streams: [{size: 148, ipv6: {}, udp: {src: {from: 49152, to: 49161}}, vxlan: {inner: {ipv4: {}, udp: {src: {from: 10000, to: 10009}}}}}]"},
		{"gre-csum-key-seq", "streams: [{size: 160, ipv4: {}, gre: {checksum: true, key: 42, seq: {from: 0, to: 4095}, inner: {ipv4: {src: 198.18.21.0/29}, udp: {}}}}]"},
		{"fragments", "streams: [{size: 3200, ipv4: {fragment: {mtu: 1500}}, udp: {src: {from: 6000, to: 6009}}}]"},
		{"syn-sweep", "streams: [{ipv4: {dst: 198.19.1.0/24}, tcp: {dst: [22, 80, 443]}, tuple: [ipv4.dst, tcp.dst]}]"},
	} {
		s, err := Parse(c.name+".wpg.yaml", []byte(c.yaml))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/stream", func(b *testing.B) { benchRender(b, s, PlanStream) })
		if c.name != "fragments" {
			b.Run(c.name+"/prerender", func(b *testing.B) { benchRender(b, s, PlanPrerender) })
		}
	}
}
