package template_test

import (
	"fmt"
	"os"

	"github.com/wpg-dev/wpg/template"
)

// The first frame of the embedded default template, in hex: Ethernet,
// IPv4 198.18.0.1 → 198.19.0.1, UDP 1024 → 9, and the wpg signature
// (magic 5750, stream 0, seq 0, tx time 0) in the last 20 bytes.
func ExampleDefault() {
	frames, err := template.Preview(template.Default(), 2)
	if err != nil {
		panic(err)
	}
	for _, f := range frames {
		fmt.Printf("%x\n", f.Bytes)
	}
	// Output:
	// 020000000002020000000001080045000032000040004011ae93c6120001c613000104000009001e183100005750000000000000000000000000000000000000
	// 020000000002020000000001080045000032000040004011ae93c6120001c613000104010009001e182f00005750000000000000000000010000000000000000
}

// Parse a template and print its first frames decoded layer by layer.
func ExamplePreview() {
	spec, err := template.Parse("ping.wpg.yaml", []byte(`
streams:
  - name: ping
    size: 64
    ipv4: {src: 198.18.0.1, dst: [198.19.0.1, 198.19.0.2]}
    icmp: {id: 7}
`))
	if err != nil {
		panic(err)
	}
	frames, err := template.Preview(spec, 2)
	if err != nil {
		panic(err)
	}
	for _, f := range frames {
		f.WriteText(os.Stdout)
	}
	// Output:
	// frame 0: stream 0 (ping) seq 0, 64 bytes
	//   Ethernet     02:00:00:00:00:01 → 02:00:00:00:00:02 type IPv4 (0x0800)
	//   IPv4         198.18.0.1 → 198.19.0.1 proto ICMPv4 ttl 64 dscp 0 ecn 0 id 0 df true len 50 checksum 0xaea3 ok
	//   ICMPv4       EchoRequest id 7 seq 0 checksum 0xa0a8 ok
	//   Payload      22 bytes, wpg signature: stream 0 seq 0 tx 0
	//   00000000  02 00 00 00 00 02 02 00  00 00 00 01 08 00 45 00  |..............E.|
	//   00000010  00 32 00 00 40 00 40 01  ae a3 c6 12 00 01 c6 13  |.2..@.@.........|
	//   00000020  00 01 08 00 a0 a8 00 07  00 00 00 00 57 50 00 00  |............WP..|
	//   00000030  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
	// frame 1: stream 0 (ping) seq 1, 64 bytes
	//   Ethernet     02:00:00:00:00:01 → 02:00:00:00:00:02 type IPv4 (0x0800)
	//   IPv4         198.18.0.1 → 198.19.0.2 proto ICMPv4 ttl 64 dscp 0 ecn 0 id 0 df true len 50 checksum 0xaea2 ok
	//   ICMPv4       EchoRequest id 7 seq 1 checksum 0xa0a6 ok
	//   Payload      22 bytes, wpg signature: stream 0 seq 1 tx 0
	//   00000000  02 00 00 00 00 02 02 00  00 00 00 01 08 00 45 00  |..............E.|
	//   00000010  00 32 00 00 40 00 40 01  ae a2 c6 12 00 01 c6 13  |.2..@.@.........|
	//   00000020  00 02 08 00 a0 a6 00 07  00 01 00 00 57 50 00 00  |............WP..|
	//   00000030  00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 00  |................|
}

// Errors name the file, line, column and field, and say how to fix it.
func ExampleParse_error() {
	_, err := template.Parse("mixed.wpg.yaml", []byte("streams:\n  - ipv4:\n      src: 2001:db8::1\n"))
	fmt.Println(err)
	// Output:
	// mixed.wpg.yaml:3:12: streams[0].ipv4.src: "2001:db8::1" is an IPv6 address in an IPv4 field; use an IPv4 address such as 198.18.0.1 (or put it in an ipv6 layer)
}

// Compile a template for one worker and render a batch of frames into
// buffers, as the engine does with a backend's buffers.
func ExampleCompile() {
	src, err := template.Compile(template.Default(), template.CompileOptions{Worker: 0, Workers: 1, Plan: template.PlanAuto})
	if err != nil {
		panic(err)
	}
	plan, detail := src.Plan()
	fmt.Println(plan)
	fmt.Println(detail)
	bufs := make([][]byte, 4)
	for i := range bufs {
		bufs[i] = make([]byte, src.MaxFrame())
	}
	lens := make([]int, len(bufs))
	n := src.Render(bufs, lens, 1000)
	for i := range n {
		f := bufs[i][:lens[i]]
		fmt.Printf("%d bytes, UDP source port %d\n", len(f), int(f[34])<<8|int(f[35]))
	}
	// Output:
	// prerender
	// stream 0 (udp64): prerendered 64512 frames (3.9 MiB), one period of its fields, replayed
	// 64 bytes, UDP source port 1024
	// 64 bytes, UDP source port 1025
	// 64 bytes, UDP source port 1026
	// 64 bytes, UDP source port 1027
}
