package template

import (
	"fmt"
	"testing"
)

// TestRunLoopsMatchRenderOne renders the same frames through the run
// loops (fast.go) and through renderOne per frame and requires them equal
// byte for byte: 64-byte frames (runPre64) and other sizes, odd ones included (runPre),
// frames of several sizes (runPreVar), UDP
// and TCP checksums over IPv4 and IPv6, no checksum, no signature, one
// and three workers, batches that wrap the prerendered arena, and times
// whose checksum share is large.
func TestRunLoopsMatchRenderOne(t *testing.T) {
	cases := map[string]string{
		"udp64": "", // the default template
		"udp65-odd": `streams:
  - size: 65
    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}
    udp: {src: {from: 1024, to: 1100}, dst: 9}
`,
		"tcp74": `streams:
  - size: 74
    ipv4: {src: {from: 198.18.0.1, to: 198.18.0.9}, dst: 198.19.0.1}
    tcp: {src: 80, dst: {from: 1, to: 37}}
`,
		"udp6-100": `streams:
  - size: 100
    ipv6: {src: "2001:2::1", dst: "2001:2::2"}
    udp: {src: {from: 1, to: 50}, dst: 9}
`,
		"raw64": `streams:
  - size: 64
    ethernet: {src: {from: "02:00:00:00:00:01", to: "02:00:00:00:00:09"}, dst: "02:00:00:00:00:02"}
`,
		"sizes-odd": `streams:
  - size: [64, 101, 594, 1514, 77]
    ipv4: {src: {from: 198.18.0.1, to: 198.18.0.7}, dst: 198.19.0.1}
    udp: {src: [1, 2, 3], dst: 9}
`,
		"sizes-tcp6": `streams:
  - size: {from: 100, to: 130, step: 3}
    ipv6: {src: "2001:2::1", dst: "2001:2::2"}
    tcp: {src: 80, dst: {from: 1, to: 4}}
`,
		"nosig64": `streams:
  - size: 64
    signature: false
    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}
    udp: {src: {from: 1, to: 30}, dst: 9}
`,
	}
	for name, text := range cases {
		spec := Default()
		if text != "" {
			var err error
			if spec, err = Parse(name+".wpg.yaml", []byte(text)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/w%d", name, workers), func(t *testing.T) {
				fast, err := Compile(spec, CompileOptions{Plan: PlanPrerender, Worker: workers - 1, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				slow, err := Compile(spec, CompileOptions{Plan: PlanPrerender, Worker: workers - 1, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				if fast.streams[0].run == runOne {
					t.Fatalf("stream gets no run loop (plan %s)", fast.detail)
				}
				for _, cs := range slow.streams {
					cs.run = runOne
				}
				// Batches of 61, not a divisor of any arena: they straddle
				// its end.
				sameRuns(t, fast, slow, []int{61}, 40, 61, nil)
			})
		}
	}
}
