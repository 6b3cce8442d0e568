package template

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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

// bigStreams is a template of n streams of one line each: 65,535 are
// about 7 MB, the largest template wpg sends written out stream by stream.
func bigStreams(n int) []byte {
	var b strings.Builder
	b.WriteString("seed: 7\nstreams:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: s%d, size: 64, ipv4: {src: 198.18.%d.%d, dst: 198.19.0.1}, udp: {src: 1024, dst: %d}}\n",
			i, i/250%250, 1+i%250, 1+i%65535)
	}
	return []byte(b.String())
}

// bigList is a template of one stream whose UDP source port is a list of
// n values: a million are about 7 MB.
func bigList(n int) []byte {
	var b strings.Builder
	b.WriteString("streams:\n  - ipv4: {}\n    udp:\n      src: [")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, 1+i%65535)
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// BenchmarkReadTemplate: the two large templates of #27 (65,535 one-line
// streams; one stream with a list of a million values) are read in
// bounded memory: peak-heap-MB is the most the heap held while Parse ran
// (sampled every half millisecond, the template's bytes not counted), the
// figure that with the runtime's own makes the peak RSS (docs/perf.md,
// "Reading templates"). Run with -benchmem.
func BenchmarkReadTemplate(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{{"streams65535", bigStreams(65535)}, {"list1M", bigList(1_000_000)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			var peak uint64
			for range b.N {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				peak = max(peak, peakHeap(func() {
					if _, err := Parse("big.wpg.yaml", c.data); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// peakHeap runs f and returns the most heap (live and not yet collected
// objects) above what there was before, sampled as f runs.
func peakHeap(f func()) uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	if h := read(); h > peak.Load() {
		peak.Store(h)
	}
	return peak.Load() - min(base, peak.Load())
}
