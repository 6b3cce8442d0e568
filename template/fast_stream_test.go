package template

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// streamRunTemplates are streams whose streamed frames exercise every step
// of runStream: sizes varying (odd ones, random, IMIX), varying fields of
// every width (2, 4, 6, 8 bytes) and kind (increment, decrement, list,
// random over a range, a list and all 64 bits, tuples of lists and
// ranges), fields sharing a slot (read-modify-write), no checksum, one, two
// (the first covering the second or not) and more (tunnels), checksums
// meant to be wrong, no signature.
var streamRunTemplates = map[string]string{
	"sizes-odd":     `streams: [{size: {from: 67, to: 131, step: 3}, ipv4: {src: {from: 198.18.0.1, to: 198.18.0.77}}, udp: {dst: {from: 9, to: 1, mode: decrement}}}]`,
	"sizes-random":  `streams: [{size: {from: 79, to: 300, mode: random, seed: 5}, vlan: {id: [1, 2, 4094]}, ipv4: {ttl: {from: 1, to: 255}}, tcp: {seq: {from: 0, to: 4294967295, mode: random}}}]`,
	"imix":          `streams: [{size: {imix: {82: 7, 594: 4, 1514: 1}}, ipv6: {src: {from: "2001:2::1", to: "2001:2::ffff:ffff:ffff:ffff"}, flow_label: {from: 1048570, to: 1048575}, dscp: [46, 0, 63]}, udp: {src: [1, 2, 3]}}]`,
	"mac-random":    `streams: [{size: 64, ethernet: {src: {from: "02:00:00:00:00:01", to: "02:00:00:00:ff:ff", mode: random}, dst: ["02:00:00:00:00:02", "02:00:00:00:00:03"]}, ipv4: {}, udp: {}}]`,
	"ipv6-all64":    `streams: [{size: 90, ipv6: {src: {from: "2001:2::", to: "2001:2::ffff:ffff:ffff:ffff", mode: random, seed: 3}}, udp: {}}]`,
	"list-random":   `streams: [{size: 64, ipv4: {src: [198.18.0.1, 198.18.0.9, 198.18.7.7], dst: {from: 198.19.0.1, to: 198.19.0.3, mode: random}}, udp: {src: [5, 6], dst: {from: 1000, to: 2000, mode: random}}}]`,
	"tuple":         `streams: [{size: 64, ipv4: {src: {from: 198.18.0.0, to: 198.18.0.6}, dst: [198.19.0.1, 198.19.0.2, 198.19.0.3]}, udp: {src: {from: 9, to: 2, mode: decrement}, dst: {from: 1, to: 5, step: 2}}, tuple: [ipv4.src, udp.src, ipv4.dst]}]`,
	"no-checksum":   `streams: [{size: 64, ethernet: {src: {from: "02:00:00:00:00:01", to: "02:00:00:00:00:09"}}}]`,
	"no-signature":  `streams: [{size: {from: 60, to: 66}, signature: false, ipv4: {src: {from: 198.18.0.1, to: 198.18.0.9}}, udp: {src: {from: 1, to: 30}}}]`,
	"bad-checksums": `streams: [{size: 80, ipv4: {checksum: bad, id: {from: 0, to: 9}}, udp: {checksum: bad, src: {from: 1, to: 65535, mode: random}}}]`,
	"mpls-rmw":      `streams: [{size: 80, mpls: [{label: {from: 16, to: 30}, ttl: [64, 1]}], ipv4: {}, udp: {}}]`,
	"vxlan6":        `streams: [{size: 148, ipv6: {}, udp: {src: {from: 49152, to: 49161}}, vxlan: {vni: [1, 2], inner: {ipv4: {src: {from: 198.18.0.1, to: 198.18.0.5}}, udp: {src: {from: 10000, to: 10009}}}}}]`,
	"gre":           `streams: [{size: {from: 160, to: 170}, ipv4: {}, gre: {checksum: true, key: 42, seq: {from: 0, to: 4095}, inner: {ipv4: {src: 198.18.21.0/29}, udp: {checksum: bad}}}}]`,
	"payload":       `streams: [{size: 100, ipv4: {}, udp: {}, payload: {pattern: "ff", fields: [{offset: 0, width: 1, value: {from: 0, to: 9}}, {offset: 1, width: 1, value: [7, 8]}, {offset: 3, width: 2, value: {from: 5, to: 1}}, {offset: 5, width: 4, value: {from: 0, to: 4294967295, mode: random}}]}}]`,
}

// streamRunSpecs are the specs TestStreamRunMatchesRenderStream renders: the
// templates above, the varied traffic of the benchmarks, and every stream of
// every example, each as a template of its own (a run is one stream's).
func streamRunSpecs(t *testing.T) map[string]*Spec {
	t.Helper()
	specs := map[string]*Spec{}
	for name, y := range streamRunTemplates {
		s, err := Parse(name+".wpg.yaml", []byte(y))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specs[name] = s
	}
	files, err := filepath.Glob("../examples/*.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("testdata/varied/*.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, more...) {
		s := mustLoad(t, f)
		for i := range s.Streams {
			if s.Streams[i].Replay != nil {
				continue
			}
			one := *s
			one.Streams = s.Streams[i : i+1]
			specs[fmt.Sprintf("%s[%d]", filepath.Base(f), i)] = &one
		}
	}
	return specs
}

// TestStreamRunMatchesRenderStream renders the same streamed frames through
// the streaming run loop (runStream, in passes) and through renderStream
// per frame, and requires them equal byte for byte, with their lengths:
// one and three workers, batches of 1 to 130 frames (chunks of runChunk and
// their remainders), the run loop and the per-frame path taking turns on
// one Source (they share the stream's state), into fresh buffers and, with
// KeepFrames, into a ring of buffers that keep their frames.
func TestStreamRunMatchesRenderStream(t *testing.T) {
	for name, spec := range streamRunSpecs(t) {
		for _, workers := range []int{1, 3} {
			for _, keep := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/w%d/keep=%v", name, workers, keep), func(t *testing.T) {
					streamRunSame(t, spec, workers, keep)
				})
			}
		}
	}
}

func streamRunSame(t *testing.T, spec *Spec, workers int, keep bool) {
	o := CompileOptions{Plan: PlanStream, Worker: workers - 1, Workers: workers}
	fast, err := Compile(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := Compile(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	cs := fast.streams[0]
	if cs.fr != nil || cs.tm != nil {
		t.Skip("fragments are cut per datagram, a stream with a schedule of its own rendered frame by frame (timed.go)")
	}
	if cs.run != runStream {
		t.Fatalf("streamed stream gets no streaming run loop (plan %s)", fast.detail)
	}
	for _, s := range slow.streams {
		s.run = runOne
	}
	if keep {
		fast.KeepFrames()
		slow.KeepFrames()
	}
	// Every fifth batch the per-frame path renders the fast Source's
	// frames too: the two share the stream's state.
	turns := func(round int) {
		cs.run = runStream
		if round%5 == 4 {
			cs.run = runOne
		}
	}
	sameRuns(t, fast, slow, []int{1, 64, 7, 65, 130, 3, 128, 63}, 48, 150, turns)
}

// sameRuns renders rounds batches (of the sizes in batches, in turn) with
// a and with b, each into a ring of depth buffers of its own (filled with
// different garbage) reused in order, as TX-ring slots are, at the same
// times, and requires the same counts, lengths and frames, byte for byte;
// before(round), when not nil, runs before each batch.
func sameRuns(t *testing.T, a, b *Source, batches []int, rounds, depth int, before func(round int)) {
	t.Helper()
	aring, bring := make([][]byte, depth), make([][]byte, depth)
	for i := range aring {
		aring[i] = bytes.Repeat([]byte{0xa5}, a.MaxFrame())
		bring[i] = bytes.Repeat([]byte{0x5a}, b.MaxFrame())
	}
	head, total := 0, 0
	for round := range rounds {
		m := batches[round%len(batches)]
		ab, bb := make([][]byte, m), make([][]byte, m)
		al, bl := make([]int, m), make([]int, m)
		for i := range m {
			ab[i], bb[i] = aring[head], bring[head]
			head = (head + 1) % depth
		}
		if before != nil {
			before(round)
		}
		now := int64(round)*0x0123_4567_89ab + 0x7fff_ffff_fff0
		na, nb := a.Render(ab, al, now), b.Render(bb, bl, now)
		if na != nb {
			t.Fatalf("round %d: %d frames against %d", round, na, nb)
		}
		for i := range na {
			if al[i] != bl[i] || !bytes.Equal(ab[i][:al[i]], bb[i][:bl[i]]) {
				t.Fatalf("round %d frame %d (frame %d of the run) differs:\n%x\n%x", round, i, total+i, ab[i][:al[i]], bb[i][:bl[i]])
			}
		}
		if total += na; na == 0 {
			return
		}
	}
}

// TestCursorFillMatchesNext: fill gives the values of as many calls of next,
// and leaves the cursor where they leave it, for every kind, stride and
// start, chunk after chunk.
func TestCursorFillMatchesNext(t *testing.T) {
	values := []Value{
		{Kind: Increment, From: 10, To: 100, Step: 3},
		{Kind: Decrement, From: 10, To: 100, Step: 7},
		{Kind: List, List: []uint64{5, 1, 4, 4, 9}},
		{Kind: Weighted, List: []uint64{64, 64, 1518, 594}},
		{Kind: Random, From: 1000, To: 1999, Seed: 11},
		{Kind: Random, List: []uint64{3, 5, 7}, Seed: 12},
		{Kind: Random, From: 0, To: ^uint64(0), Seed: 13},
		{Kind: Increment, From: 0, To: 9, Step: 1, Div: 7},
		{Kind: Decrement, From: 0, To: 90, Step: 10, Div: 3},
		{Kind: List, List: []uint64{8, 6, 4}, Div: 1000},
		Fix(42),
	}
	for vi := range values {
		v := &values[vi]
		for _, w := range []uint64{1, 2, 3, 13, 26, 1001} { // 13 and 26: a period of 13 that does not move
			for _, k := range []uint64{0, 1, 5, 6999} {
				a, b := newCursor(v, k, w), newCursor(v, k, w)
				out := make([]uint64, runChunk)
				for round := range 40 {
					m := 1 + (round*17)%runChunk
					a.fill(out[:m])
					for j := range m {
						if want := b.next(); out[j] != want {
							t.Fatalf("value %d (%+v), w %d, k %d: round %d value %d: fill %d, next %d", vi, *v, w, k, round, j, out[j], want)
						}
					}
				}
			}
		}
	}
}
