package template_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/template"
)

// A tuple varies fields as a cross product, the first slowest: a SYN to
// each of three ports on every host of a prefix (198.19.1.0/30: hosts .1
// and .2), then again.
func ExampleParse_tuple() {
	spec, err := template.Parse("sweep.wpg.yaml", []byte(`
streams:
  - ipv4: {dst: 198.19.1.0/30}
    tcp: {dst: [22, 80, 443], flags: [syn]}
    tuple: [ipv4.dst, tcp.dst]
`))
	if err != nil {
		panic(err)
	}
	frames, err := template.Preview(spec, 7)
	if err != nil {
		panic(err)
	}
	for _, f := range frames {
		b := f.Bytes
		fmt.Printf("198.19.1.%d:%d\n", b[33], int(b[36])<<8|int(b[37]))
	}
	// Output:
	// 198.19.1.1:22
	// 198.19.1.1:80
	// 198.19.1.1:443
	// 198.19.1.2:22
	// 198.19.1.2:80
	// 198.19.1.2:443
	// 198.19.1.1:22
}

// A VXLAN frame decoded by Preview: the outer stack, the VXLAN header and
// the inner Ethernet frame, every checksum verified (the outer UDP
// checksum is 0 over IPv4, as RFC 7348 advises).
func ExampleDecode_vxlan() {
	spec, err := template.Parse("vxlan.wpg.yaml", []byte(`
streams:
  - ipv4: {src: 198.18.30.1, dst: 198.19.30.1}
    udp: {src: 49152}
    vxlan: {vni: 5000, inner: {ipv4: {src: 198.18.31.1, dst: 198.19.31.1}, udp: {dst: 7001}}}
`))
	if err != nil {
		panic(err)
	}
	frames, err := template.Preview(spec, 1)
	if err != nil {
		panic(err)
	}
	for _, l := range frames[0].Layers {
		fmt.Printf("%-8s %s\n", l.Name, l.Summary)
	}
	// Output:
	// Ethernet 02:00:00:00:00:01 → 02:00:00:00:00:02 type IPv4 (0x0800)
	// IPv4     198.18.30.1 → 198.19.30.1 proto UDP ttl 64 dscp 0 ecn 0 id 0 df true len 98 checksum 0x7263 ok
	// UDP      49152 → 4789 len 78 checksum 0x0000 none
	// VXLAN    vni 5000
	// Ethernet 02:00:00:00:00:01 → 02:00:00:00:00:02 type IPv4 (0x0800)
	// IPv4     198.18.31.1 → 198.19.31.1 proto UDP ttl 64 dscp 0 ecn 0 id 0 df true len 48 checksum 0x7095 ok
	// UDP      1024 → 7001 len 28 checksum 0xbee4 ok
	// Payload  20 bytes, wpg signature: stream 0 seq 0 tx 0
}
