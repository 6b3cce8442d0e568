package template

import (
	"fmt"
	"strings"
	"testing"
)

// manyStreams is a template of n streams, each with a name, a size and
// two layers with a range: the largest template wpg sends has 65,535.
func manyStreams(n int) []byte {
	var b strings.Builder
	b.WriteString("seed: 7\nstreams:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: s%d\n    size: 64\n    ipv4: {src: 198.18.%d.%d, dst: 198.19.0.1}\n    udp: {src: {from: 1024, to: 2047}, dst: %d}\n",
			i, i/250%250, 1+i%250, 1+i%65535)
	}
	return []byte(b.String())
}

// BenchmarkParseManyStreams: decoding the largest template (65,535
// streams) is bounded in time and memory (docs/templates.md, "Limits");
// run with -benchmem.
func BenchmarkParseManyStreams(b *testing.B) {
	for _, n := range []int{1000, 65535} {
		data := manyStreams(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse("many.wpg.yaml", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
