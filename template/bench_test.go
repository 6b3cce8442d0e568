package template

import (
	"runtime"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

func benchRender(b *testing.B, s *Spec, plan string) { benchRenderKeep(b, s, plan, false) }

// benchRenderKeep renders into the same 256 buffers every batch; with keep
// the Source is told (KeepFrames) that they keep their contents, as
// TX-ring slots do.
func benchRenderKeep(b *testing.B, s *Spec, plan string, keep bool) {
	src, err := Compile(s, CompileOptions{Plan: plan})
	if err != nil {
		b.Fatal(err)
	}
	if keep {
		src.KeepFrames()
	}
	const batch = 256
	bufs := make([][]byte, batch)
	lens := make([]int, batch)
	mem := make([]byte, batch*2048)
	for i := range bufs {
		bufs[i] = mem[i*2048 : i*2048+src.MaxFrame()]
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := sys.ThreadCPUTimeNs()
	now := int64(1)
	for b.Loop() {
		if n := src.Render(bufs, lens, now); n != batch {
			b.Fatalf("rendered %d", n)
		}
		now++
	}
	b.StopTimer()
	cpu := float64(sys.ThreadCPUTimeNs() - cpu0)
	frames := float64(b.N) * batch
	// CPU time of this thread per frame: what one core does when it is not
	// shared (the machine these numbers come from is shared).
	b.ReportMetric(cpu/frames, "cpu-ns/frame")
	ns := float64(b.Elapsed().Nanoseconds()) / frames
	b.ReportMetric(ns, "ns/frame")
	b.ReportMetric(1e3/ns, "Mpps")
}

// BenchmarkRender measures Render of batches of 256 frames: the default
// template (64-byte UDP/IPv4, one varying port + signature) and
// examples/udp64.wpg.yaml (source address and port varying) streamed and
// prerendered, the mixed example under plan auto and streamed, one stream
// of IMIX sizes streamed and prerendered, and the default at 1500
// bytes streamed and prerendered, each with and without KeepFrames.
func BenchmarkRender(b *testing.B) {
	b.Run("default/stream", func(b *testing.B) { benchRender(b, Default(), PlanStream) })
	b.Run("default/prerender", func(b *testing.B) { benchRender(b, Default(), PlanPrerender) })
	two, err := Load("../examples/udp64.wpg.yaml") // source address and port vary
	if err != nil {
		b.Fatal(err)
	}
	b.Run("two-fields/stream", func(b *testing.B) { benchRender(b, two, PlanStream) })
	b.Run("two-fields/prerender", func(b *testing.B) { benchRender(b, two, PlanPrerender) })
	mixed, err := Load("../examples/mixed.wpg.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("mixed/auto", func(b *testing.B) { benchRender(b, mixed, PlanAuto) })
	b.Run("mixed/stream", func(b *testing.B) { benchRender(b, mixed, PlanStream) })
	// One stream of IMIX sizes: a size per frame.
	imix, err := Parse("imix.wpg.yaml", []byte("streams:\n  - name: imix\n    size: imix\n    ipv4: {src: {from: 198.18.0.1, to: 198.18.0.100}, dst: 198.19.0.1}\n    udp: {src: 9, dst: 9}\n"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("imix/stream", func(b *testing.B) { benchRender(b, imix, PlanStream) })
	b.Run("imix/prerender", func(b *testing.B) { benchRender(b, imix, PlanPrerender) })
	// 1500-byte frames: whole frames into the buffers, or (keep) only the
	// bytes that vary, the buffers holding last lap's frame.
	big, err := DefaultWithSize(1500)
	if err != nil {
		b.Fatal(err)
	}
	for _, plan := range []string{PlanStream, PlanPrerender} {
		b.Run("1500/"+plan, func(b *testing.B) { benchRenderKeep(b, big, plan, false) })
		b.Run("1500/"+plan+"-keep", func(b *testing.B) { benchRenderKeep(b, big, plan, true) })
	}
	// 1500-byte frames with nothing varying but the signature (the frame
	// of scripts/afxdp-bench.py): one prerendered frame, replayed.
	fixed, err := Parse("fixed1500.wpg.yaml", []byte(fixed1500))
	if err != nil {
		b.Fatal(err)
	}
	for _, plan := range []string{PlanAuto, PlanStream} {
		b.Run("1500-fixed/"+plan, func(b *testing.B) { benchRenderKeep(b, fixed, plan, false) })
		b.Run("1500-fixed/"+plan+"-keep", func(b *testing.B) { benchRenderKeep(b, fixed, plan, true) })
	}
}
