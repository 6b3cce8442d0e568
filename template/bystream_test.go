package template

import (
	"fmt"
	"testing"
)

// byStreamTemplates interleave several streams: prerendered and streamed
// ones of one size and of varying sizes, shares that do not divide a batch,
// counts that end streams within a batch (the frame-by-frame path takes
// over, and the grouping comes back for what is left), a stream whose
// frames are fragments.
var byStreamTemplates = map[string]string{
	"counts": `
streams:
  - {count: 1000, share: 3, size: 64, ipv4: {src: {from: 198.18.0.1, to: 198.18.0.50}}, udp: {}}
  - {count: 700, size: [64, 100, 70], ipv4: {}, udp: {src: {from: 1, to: 65535, mode: random}}}
  - {count: 2500, share: 2, size: 96, ipv6: {}, tcp: {seq: {from: 0, to: 9}}}
`,
	"sizes-mix": `
streams:
  - {share: 5, size: {from: 70, to: 130, step: 6}, vlan: {id: {from: 1, to: 9}}, ipv4: {}, udp: {dst: {from: 1, to: 99}}}
  - {share: 2, size: 64, ipv4: {dst: {from: 198.19.0.0, to: 198.19.255.255, mode: random}}, udp: {}}
  - {size: 300, ipv4: {ttl: [1, 2]}, udp: {}}
`,
	"fragments": `
streams:
  - {share: 2, size: 3200, ipv4: {fragment: {mtu: 1500}}, udp: {src: {from: 6000, to: 6009}}}
  - {size: 64, ipv4: {}, udp: {src: {from: 1, to: 3}}}
`,
}

// TestByStreamMatchesFrameByFrame renders several interleaved streams with
// Render's grouping by stream and frame by frame (the grouping off), and
// requires the same frames and lengths, byte for byte: the examples' mixed
// traffic under every plan, the templates above, one and three workers,
// batches of 1 to 700 frames, into fresh buffers and, with KeepFrames, into
// a ring of buffers that keep their frames (a buffer's last frame is often
// another stream's, or another size's).
func TestByStreamMatchesFrameByFrame(t *testing.T) {
	specs := map[string]*Spec{"mixed": mustLoad(t, "../examples/mixed.wpg.yaml")}
	for name, y := range byStreamTemplates {
		s, err := Parse(name+".wpg.yaml", []byte(y))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specs[name] = s
	}
	for name, spec := range specs {
		for _, plan := range []string{PlanAuto, PlanStream} {
			for _, workers := range []int{1, 3} {
				for _, keep := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%s/w%d/keep=%v", name, plan, workers, keep), func(t *testing.T) {
						byStreamSame(t, spec, CompileOptions{Plan: plan, Worker: workers - 1, Workers: workers}, keep)
					})
				}
			}
		}
	}
}

func byStreamSame(t *testing.T, spec *Spec, o CompileOptions, keep bool) {
	grouped, err := Compile(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	single, err := Compile(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if grouped.by == nil {
		t.Fatalf("%d streams not grouped", len(grouped.active))
	}
	single.by = nil
	if keep {
		grouped.KeepFrames()
		single.KeepFrames()
	}
	sameRuns(t, grouped, single, []int{256, 1, 700, 64, 255, 3, 511}, 60, 300, nil)
}
