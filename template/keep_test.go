package template

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// keepTemplates have frames of at least KeepMin bytes, so KeepFrames
// applies: varying fields sharing a word, varying sizes, several streams.
var keepTemplates = map[string]string{
	"payload-adjacent": `
streams:
  - size: 400
    ipv4: {}
    udp: {}
    payload: {pattern: "ff", fields: [{offset: 0, width: 1, value: {from: 0, to: 9}}, {offset: 1, width: 1, value: [7, 8]}, {offset: 3, width: 2, value: {from: 5, to: 1}}, {offset: 5, width: 4, value: {from: 0, to: 4294967295, mode: random}}]}
`,
	"ipv6-shared-word": `
streams:
  - size: 300
    ipv6: {dscp: [46, 0, 63], ecn: 2, flow_label: {from: 1048570, to: 1048575}}
    udp: {src: {from: 1, to: 7}}
`,
	"l4-csum-constant": `
streams:
  - size: 500
    ipv4: {id: {from: 0, to: 9}}
    udp: {}
`,
	"fixed-1500": fixed1500,
	// One prerendered frame whose signature changes two checksums (the
	// inner UDP one and the outer one covering it), one of them bad.
	"fixed-vxlan6": `
streams:
  - size: 1400
    ipv6: {}
    udp: {}
    vxlan:
      inner:
        ipv4: {}
        udp: {checksum: bad}
`,
	// Frames of two sizes prerendered whole (no delta): 4 frames, kept
	// per frame of the arena.
	"arena-sizes": `
streams:
  - size: [1000, 1400]
    ipv4: {}
    udp: {src: [1, 2]}
`,
	"sizes": `
streams:
  - size: {from: 250, to: 300, mode: random}
    ipv4: {src: {from: 198.18.0.1, to: 198.18.0.9}, ttl: {from: 1, to: 255}}
    udp: {src: [1, 2, 3]}
  - size: [80, 1000]
    share: 2
    ipv4: {dst: {from: 198.19.0.1, to: 198.19.0.5}}
    tcp: {seq: {from: 0, to: 4294967295, mode: random}}
`,
}

// fixed1500 is a 1500-byte frame in which nothing but the signature varies
// (scripts/afxdp-bench.py sends it): the default plan prerenders it as one
// frame, which a kept buffer then holds after its first lap.
const fixed1500 = `
streams:
  - name: udp1500
    size: 1500
    ethernet: {src: "02:00:00:00:00:01", dst: "02:00:00:00:00:99"}
    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}
    udp: {src: 9, dst: 9}
`

// keepSpecs returns the specs KeepFrames is tested on.
func keepSpecs(t *testing.T) map[string]*Spec {
	t.Helper()
	specs := map[string]*Spec{"mixed": mustLoad(t, "../examples/mixed.wpg.yaml")}
	d, err := DefaultWithSize(1500)
	if err != nil {
		t.Fatal(err)
	}
	specs["default-1500"] = d
	for name, y := range keepTemplates {
		s, err := Parse(name+".wpg.yaml", []byte(y))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specs[name] = s
	}
	return specs
}

// TestKeepFramesSameBytes renders the same frames twice: into fresh buffers
// (filled with garbage) and, with KeepFrames, into a small "ring" of
// buffers reused in order, as TX-ring slots are. Every frame must be the
// same byte for byte, whatever the buffer held before.
func TestKeepFramesSameBytes(t *testing.T) {
	for name, s := range keepSpecs(t) {
		for _, plan := range []string{PlanAuto, PlanStream, PlanPrerender} {
			if _, err := Compile(s, CompileOptions{Plan: plan}); plan == PlanPrerender && err != nil && strings.Contains(err.Error(), "cannot be prerendered") {
				continue // e.g. random fields: no such run exists
			}
			for _, depth := range []int{1, 5, 64} {
				t.Run(fmt.Sprintf("%s/%s/depth%d", name, plan, depth), func(t *testing.T) {
					keepSame(t, s, plan, depth)
				})
			}
		}
	}
}

func keepSame(t *testing.T, s *Spec, plan string, depth int) {
	ref, err := Compile(s, CompileOptions{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Compile(s, CompileOptions{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	kept.KeepFrames()
	if kept.memo == nil {
		t.Fatalf("KeepFrames ignored for frames of up to %d bytes", kept.MaxFrame())
	}
	const stride = 2048
	slab := make([]byte, depth*stride)
	ring := make([][]byte, depth)
	for i := range ring {
		ring[i] = slab[i*stride : i*stride+kept.MaxFrame()]
	}
	batch := min(3, depth)
	bufs, lens := make([][]byte, batch), make([]int, batch)
	rbufs, rlens := make([][]byte, batch), make([]int, batch)
	head := 0
	for frame := 0; frame < 3000; frame += batch {
		for i := range bufs {
			bufs[i] = ring[head]
			head = (head + 1) % depth
			rbufs[i] = bytes.Repeat([]byte{0xa5}, ref.MaxFrame())
		}
		now := int64(1e9 + frame)
		n, m := kept.Render(bufs, lens, now), ref.Render(rbufs, rlens, now)
		if n != m {
			t.Fatalf("frame %d: rendered %d kept, %d fresh", frame, n, m)
		}
		for i := range n {
			if got, want := bufs[i][:lens[i]], rbufs[i][:rlens[i]]; !bytes.Equal(got, want) {
				t.Fatalf("frame %d: kept buffer\n% x\nfresh buffer\n% x", frame+i, got, want)
			}
		}
	}
}

// TestKeepFramesSmallFramesIgnored: a Source whose frames are all below
// KeepMin keeps copying whole frames (the look-up would cost more).
func TestKeepFramesSmallFramesIgnored(t *testing.T) {
	src, err := Compile(Default(), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src.KeepFrames()
	if src.memo != nil {
		t.Fatal("KeepFrames enabled for 64-byte frames")
	}
}

// TestDeltaPrerender: one period of the default template at 1500 bytes is
// prerendered as an image plus the 16 bytes that vary (port and UDP
// checksum words), and its frames are those of the streamed plan.
func TestDeltaPrerender(t *testing.T) {
	s, err := DefaultWithSize(1500)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(s, CompileOptions{Plan: PlanPrerender})
	if err != nil {
		t.Fatal(err)
	}
	cs := src.streams[0]
	if cs.delta == nil || cs.arena != nil {
		t.Fatalf("not a delta: %s", src.detail)
	}
	if cs.delta.rec != 16 || cs.npre != 64512 {
		t.Fatalf("delta of %d bytes per frame, %d frames; want 16, 64512", cs.delta.rec, cs.npre)
	}
	if !strings.Contains(src.detail, "16 bytes that vary") {
		t.Errorf("plan detail does not say how it is kept: %s", src.detail)
	}
	a := render(t, s, CompileOptions{Plan: PlanPrerender}, 65000, 42)
	b := render(t, s, CompileOptions{Plan: PlanStream}, 65000, 42)
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			t.Fatalf("frame %d: prerendered (delta) and streamed differ", k)
		}
	}
	checkFrame(t, a[64511])
	checkFrame(t, a[64512])
}

// TestDeltaNotForSmallOrVaryingSizes: below KeepMin or with a varying
// size, prerendering keeps whole frames.
func TestDeltaNotForSmallOrVaryingSizes(t *testing.T) {
	for _, y := range []string{
		"streams: [{size: 200, ipv4: {}, udp: {src: {from: 1, to: 9}}}]\n",
		"streams: [{size: [300, 400], ipv4: {}, udp: {src: {from: 1, to: 9}}}]\n",
	} {
		s, err := Parse("t.wpg.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		src, err := Compile(s, CompileOptions{Plan: PlanPrerender})
		if err != nil {
			t.Fatal(err)
		}
		if src.streams[0].delta != nil {
			t.Errorf("%s: prerendered as a delta", y)
		}
	}
}

// TestKeptPrerenderWritesOnlyWhatChanges: a 1500-byte frame in which only
// the signature varies is prerendered by the default plan, and into a
// buffer that keeps its contents it is written whole once; from its second
// lap on only the signature and the UDP checksum are rewritten (a byte of
// the payload changed behind the Source's back stays changed), and the
// frames are those of the streamed plan into fresh buffers.
func TestKeptPrerenderWritesOnlyWhatChanges(t *testing.T) {
	s, err := Parse("fixed1500.wpg.yaml", []byte(fixed1500))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src.KeepFrames()
	if plan, detail := src.Plan(); plan != PlanPrerender || !strings.Contains(detail, "prerendered 1 frame ") || !strings.Contains(detail, "keep their frames") {
		t.Fatalf("plan %q (%s)", plan, detail)
	}
	ref, err := Compile(s, CompileOptions{Plan: PlanStream})
	if err != nil {
		t.Fatal(err)
	}
	const depth = 8
	bufs, lens := make([][]byte, depth), make([]int, depth)
	rbufs, rlens := make([][]byte, depth), make([]int, depth)
	for i := range bufs {
		bufs[i] = make([]byte, 1500)
		rbufs[i] = make([]byte, 1500)
	}
	const payload = 100 // a payload byte, well before the signature
	for lap := range 3 {
		now := int64(1e9 + lap)
		if src.Render(bufs, lens, now) != depth || ref.Render(rbufs, rlens, now) != depth {
			t.Fatal("short batch")
		}
		for i := range bufs {
			want := rbufs[i]
			if lap == 2 {
				want = bytes.Clone(want)
				want[payload] ^= 0xff
			}
			if !bytes.Equal(bufs[i][:lens[i]], want[:rlens[i]]) {
				t.Fatalf("lap %d frame %d: kept prerendered\n% x\nstreamed\n% x", lap, i, bufs[i][:lens[i]], want[:rlens[i]])
			}
			if lap == 1 {
				bufs[i][payload] ^= 0xff // not rewritten on the next lap
			}
		}
	}
}
