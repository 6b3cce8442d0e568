package template

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

func mustLoad(t testing.TB, path string) *Spec {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func render(t testing.TB, s *Spec, o CompileOptions, n int, now int64) [][]byte {
	t.Helper()
	src, err := Compile(s, o)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	bufs := make([][]byte, 64)
	lens := make([]int, 64)
	for i := range bufs {
		bufs[i] = make([]byte, src.MaxFrame())
	}
	for len(out) < n {
		m := src.Render(bufs[:min(64, n-len(out))], lens, now)
		for i := range m {
			out = append(out, append([]byte(nil), bufs[i][:lens[i]]...))
		}
		if m < min(64, n-len(out)+m) {
			break
		}
	}
	return out
}

// checkFrame verifies every checksum and length of f from scratch (a
// valid checksum sums to zero; frameChecksums walks tunnels too) and that
// gopacket decodes it without error.
func checkFrame(t testing.TB, f []byte) {
	t.Helper()
	var (
		eth  layers.Ethernet
		vlan layers.Dot1Q
		ip4  layers.IPv4
		ip6  layers.IPv6
		udp  layers.UDP
		tcp  layers.TCP
		ic4  layers.ICMPv4
		ic6  layers.ICMPv6
		arp  layers.ARP
		pay  gopacket.Payload
	)
	dlp := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &vlan, &ip4, &ip6, &udp, &tcp, &ic4, &ic6, &arp, &pay)
	dlp.IgnoreUnsupported = true
	var decoded []gopacket.LayerType
	if err := dlp.DecodeLayers(f, &decoded); err != nil {
		t.Fatalf("gopacket: %v\n%x", err, f)
	}
	checkSums(t, f)
}

var plans = []string{PlanStream, PlanPrerender}

func TestDefaultFrames(t *testing.T) {
	s := Default()
	for _, plan := range plans {
		frames := render(t, s, CompileOptions{Plan: plan}, 70000, 123456789)
		for k, f := range frames {
			if len(f) != 64 {
				t.Fatalf("%s: frame %d has %d bytes", plan, k, len(f))
			}
			if k < 300 || k > 64400 && k < 64700 {
				checkFrame(t, f)
			}
			udp := header.UDP(f[34:])
			if want := uint16(1024 + k%64512); udp.SrcPort() != want || udp.DstPort() != 9 {
				t.Fatalf("%s: frame %d ports %d→%d, want %d→9", plan, k, udp.SrcPort(), udp.DstPort(), want)
			}
			sig, ok := frame.ParseSignature(f)
			if !ok || sig.Seq != uint64(k) || sig.TxNs != 123456789 || sig.Stream != 0 {
				t.Fatalf("%s: frame %d signature %+v ok=%v", plan, k, sig, ok)
			}
		}
		if c := header.Checksum(frames[69999][34:], header.IPv4(frames[69999][14:]).PseudoSum(30)); c != 0 {
			t.Fatalf("frame 69999 checksum")
		}
	}
}

// TestPlansAgree renders every example and several test templates in both
// plans and with 1 and 3 workers: the frames must be byte-identical (packet
// k of a stream is the same whoever renders it), and valid.
func TestPlansAgree(t *testing.T) {
	specs := map[string]*Spec{"default": Default()}
	for _, f := range []string{"../examples/mixed.wpg.yaml", "../examples/udp64.wpg.yaml"} {
		specs[f] = mustLoad(t, f)
	}
	for name, y := range testTemplates {
		s, err := Parse(name, []byte(y))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specs[name] = s
	}
	for name, s := range specs {
		t.Run(name, func(t *testing.T) {
			const n = 3000
			ref := render(t, s, CompileOptions{Plan: PlanStream}, n, 42)
			for _, f := range ref {
				checkFrame(t, f)
			}
			pre := render(t, s, CompileOptions{Plan: PlanAuto, PrerenderMaxBytes: 64 << 20}, n, 42)
			for k := range ref {
				if !bytes.Equal(ref[k], pre[k]) {
					t.Fatalf("frame %d differs between plans:\nstream    %x\nprerender %x", k, ref[k], pre[k])
				}
			}
			if len(s.Streams) > 1 {
				return // interleaving differs per worker; per-stream checks below
			}
			const W = 3
			for w := range W {
				for _, plan := range []string{PlanStream, PlanAuto} {
					got := render(t, s, CompileOptions{Worker: w, Workers: W, Plan: plan, PrerenderMaxBytes: 64 << 20}, n/W, 42)
					for j, f := range got {
						checkFrame(t, f)
						if !sameBut(ref[w+j*W], f, W) {
							t.Fatalf("worker %d/%d %s frame %d != packet %d:\n%x\n%x", w, W, plan, j, w+j*W, f, ref[w+j*W])
						}
					}
				}
			}
		})
	}
}

var testTemplates = map[string]string{
	"sizes-random": `
streams:
  - size: {from: 70, to: 200, mode: random}
    ipv4: {src: {from: 198.18.0.1, to: 198.18.255.254, mode: random}, ttl: {from: 1, to: 255}}
    udp: {src: [1, 2, 3], dst: {from: 9, to: 1, mode: decrement}}
    payload: {text: "hello", fields: [{offset: 1, width: 2, value: {from: 0, to: 65535, step: 7}}, {offset: 5, width: 1, value: [1, 2]}]}
`,
	"tcp4-odd": `
streams:
  - size: {from: 75, to: 81}
    ipv4: {dscp: {from: 0, to: 63}, id: {from: 0, to: 65535}}
    tcp: {flags: [syn, ack], seq: {from: 0, to: 4294967295, mode: random}, ack: 5}
`,
	"icmp6": `
streams:
  - size: [100, 101]
    ipv6: {src: ["2001:2::1", "2001:2::abcd"], flow_label: {from: 0, to: 1048575, mode: random}, dscp: [46, 0, 63], ecn: 2}
    icmpv6: {id: 7}
`,
	"raw": `
streams:
  - size: 61
    ethernet: {type: 0x88b5, src: {from: "02:00:00:00:00:00", to: "02:00:00:ff:ff:ff", step: 3}}
    payload: {pattern: "0102030405"}
`,
	"payload-adjacent": `
streams:
  - size: 80
    ipv4: {}
    udp: {}
    payload: {pattern: "ff", fields: [{offset: 0, width: 1, value: {from: 0, to: 9}}, {offset: 1, width: 1, value: [7, 8]}, {offset: 3, width: 2, value: {from: 5, to: 1}}, {offset: 5, width: 4, value: {from: 0, to: 4294967295, mode: random}}]}
`,
	"nosig": `
streams:
  - size: 42
    signature: false
    ipv4: {}
    udp: {src: {from: 1, to: 10}}
`,
	"qinq6": `
streams:
  - size: 90
    qinq: {outer: {id: {from: 1, to: 4094}, pcp: 5, dei: true}, inner: {id: 7}}
    ipv6: {hop_limit: [1, 2]}
    udp: {}
`,
}

func TestMultiStreamShares(t *testing.T) {
	s := mustLoad(t, "../examples/mixed.wpg.yaml")
	frames := render(t, s, CompileOptions{}, 10*12*10, 0)
	counts := map[uint16]int{}
	sizes := map[int]int{}
	for _, f := range frames {
		sig, ok := frame.ParseSignature(f)
		if !ok {
			t.Fatal("no signature")
		}
		counts[sig.Stream]++
		if sig.Stream == 0 {
			sizes[len(f)]++
		}
	}
	// shares 4:2:1:1:1:1 over 1200 frames.
	want := map[uint16]int{0: 480, 1: 240, 2: 120, 3: 120, 4: 120, 5: 120}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Fatalf("per-stream counts %v, want %v", counts, want)
	}
	if sizes[64] != 280 || sizes[594] != 160 || sizes[1514] != 40 {
		t.Fatalf("IMIX sizes %v", sizes)
	}
}

func TestCountsSplitAcrossWorkers(t *testing.T) {
	y := `
streams:
  - {name: a, count: 10, ipv4: {}, udp: {}}
  - {name: b, count: 5, share: 3, ipv4: {}, udp: {}}
`
	s, err := Parse("c.wpg.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	for _, W := range []int{1, 2, 3, 4} {
		seen := map[[2]uint64]bool{}
		for w := range W {
			for _, plan := range plans {
				got := render(t, s, CompileOptions{Worker: w, Workers: W, Plan: plan}, 100, 0)
				for _, f := range got {
					sig, _ := frame.ParseSignature(f)
					if sig.Seq%uint64(W) != uint64(w) {
						t.Fatalf("W=%d worker %d sent seq %d", W, w, sig.Seq)
					}
					if plan == PlanStream {
						seen[[2]uint64{uint64(sig.Stream), sig.Seq}] = true
					}
				}
			}
		}
		if len(seen) != 15 {
			t.Fatalf("W=%d: %d distinct frames, want 15", W, len(seen))
		}
	}
}

func TestPlanAutoAndLimits(t *testing.T) {
	s := Default()
	src, err := Compile(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, d := src.Plan(); p != PlanPrerender {
		t.Fatalf("auto on the default: %s (%s)", p, d)
	}
	src, err = Compile(s, CompileOptions{PrerenderMaxPackets: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if p, d := src.Plan(); p != PlanStream || !bytes.Contains([]byte(d), []byte("--prerender-max-packets")) {
		t.Fatalf("auto with a small limit: %s (%s)", p, d)
	}
	if _, err := Compile(s, CompileOptions{Plan: PlanPrerender, PrerenderMaxBytes: 1 << 10}); err == nil {
		t.Fatal("forced prerender beyond the byte limit: no error")
	}
	r, _ := Parse("r.wpg.yaml", []byte("streams: [{ipv4: {}, udp: {src: {from: 1, to: 9, mode: random}}}]\n"))
	src, err = Compile(r, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := src.Plan(); p != PlanStream {
		t.Fatalf("random, unlimited: %s", p)
	}
	m := mustLoad(t, "../examples/mixed.wpg.yaml")
	src, _ = Compile(m, CompileOptions{})
	p, d := src.Plan()
	t.Logf("mixed: %s: %s", p, d)
}

func TestRenderAllocatesNothing(t *testing.T) {
	for _, plan := range []string{PlanStream, PlanPrerender, PlanAuto} {
		s := Default()
		if plan == PlanAuto {
			s = mustLoad(t, "../examples/mixed.wpg.yaml")
		}
		src, err := Compile(s, CompileOptions{Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([][]byte, 256)
		lens := make([]int, 256)
		for i := range bufs {
			bufs[i] = make([]byte, src.MaxFrame())
		}
		if a := testing.AllocsPerRun(100, func() { src.Render(bufs, lens, 1) }); a != 0 {
			t.Fatalf("%s: %.1f allocs per Render", plan, a)
		}
	}
}

func TestExamplesParse(t *testing.T) {
	ents, _ := os.ReadDir("../examples")
	for _, e := range ents {
		if len(e.Name()) > 9 && e.Name()[len(e.Name())-9:] == ".wpg.yaml" {
			mustLoad(t, "../examples/"+e.Name())
		}
	}
}

func TestIPv4FieldValues(t *testing.T) {
	s := mustLoad(t, "../examples/mixed.wpg.yaml")
	frames := render(t, s, CompileOptions{}, 1200, 0)
	var k uint64
	for _, f := range frames {
		sig, _ := frame.ParseSignature(f)
		if sig.Stream != 0 {
			continue
		}
		ip := header.IPv4(f[14:])
		if got, want := binary.BigEndian.Uint32(ip.Src()), uint32(0xc6120001+k%100); got != want || ip.DSCP() != []uint8{0, 10, 46}[k%3] {
			t.Fatalf("packet %d: src %08x dscp %d", k, got, ip.DSCP())
		}
		if got := header.UDP(f[34:]).SrcPort(); got != uint16(10000+2*(k%5000)) {
			t.Fatalf("packet %d: sport %d", k, got)
		}
		k++
	}
}

func TestIPv6DSCPAndFlowShareAWord(t *testing.T) {
	s, err := Parse("t.wpg.yaml", []byte("streams: [{ipv6: {dscp: [46, 0, 63], ecn: 2, flow_label: {from: 1048570, to: 1048575}}, udp: {}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range plans {
		for k, f := range render(t, s, CompileOptions{Plan: plan}, 12, 0) {
			h := header.IPv6(f[14:])
			if want := uint8([]int{46, 0, 63}[k%3]<<2 | 2); h.TrafficClass() != want || h.FlowLabel() != uint32(1048570+k%6) || binary.BigEndian.Uint32(h)>>28 != 6 {
				t.Fatalf("%s packet %d: tc %#x flow %d", plan, k, h.TrafficClass(), h.FlowLabel())
			}
		}
	}
}

func TestPayloadFieldsSharingAWord(t *testing.T) {
	s, err := Parse("t.wpg.yaml", []byte(testTemplates["payload-adjacent"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range plans {
		for k, f := range render(t, s, CompileOptions{Plan: plan}, 20, 0) {
			p := f[42:]
			if p[0] != byte(k%10) || p[1] != []byte{7, 8}[k%2] || p[2] != 0xff || binary.BigEndian.Uint16(p[3:]) != uint16(5-k%5) {
				t.Fatalf("%s packet %d: payload % x", plan, k, p[:10])
			}
		}
	}
}

// TestWorkersMultiStream: with 3 workers, packet (stream, k) of the mixed
// example is byte-identical to the one-worker render.
func TestWorkersMultiStream(t *testing.T) {
	s := mustLoad(t, "../examples/mixed.wpg.yaml")
	type id struct {
		stream uint16
		seq    uint64
	}
	ref := map[id][]byte{}
	for _, f := range render(t, s, CompileOptions{}, 3000, 9) {
		sig, _ := frame.ParseSignature(f)
		ref[id{sig.Stream, sig.Seq}] = f
	}
	matched := 0
	for w := range 3 {
		for _, plan := range []string{PlanStream, PlanAuto} {
			for _, f := range render(t, s, CompileOptions{Worker: w, Workers: 3, Plan: plan}, 1000, 9) {
				sig, _ := frame.ParseSignature(f)
				if sig.Seq%3 != uint64(w) {
					t.Fatalf("worker %d rendered seq %d", w, sig.Seq)
				}
				if r, ok := ref[id{sig.Stream, sig.Seq}]; ok {
					if !sameBut(r, f, 3) {
						t.Fatalf("worker %d %s stream %d seq %d differs from the one-worker frame", w, plan, sig.Stream, sig.Seq)
					}
					matched++
				}
			}
		}
	}
	if matched < 4000 {
		t.Fatalf("only %d frames compared", matched)
	}
}

func TestDefaultWithSize(t *testing.T) {
	s, err := DefaultWithSize(1518)
	if err != nil {
		t.Fatal(err)
	}
	if s.Streams[0].Size.At(0) != 1518 || s.Streams[0].UDP.Src.From != 1024 {
		t.Fatalf("%+v", s.Streams[0])
	}
	if _, err := DefaultWithSize(40); err == nil || !bytes.Contains([]byte(err.Error()), []byte("outside the 62..9216 bytes")) {
		t.Fatalf("size 40: %v", err)
	}
}

func TestMaxUntagged(t *testing.T) {
	spec, err := Parse("t.yaml", []byte(`streams:
  - name: tagged
    size: 1518
    vlan: {id: 5}
    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}
    udp: {src: 1, dst: 2}
  - name: plain
    size: imix
    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}
    udp: {src: 1, dst: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	if n, name := spec.MaxUntagged(); n != 1514 || name != "plain" {
		t.Fatalf("MaxUntagged = %d %q, want 1514 \"plain\" (imix's largest)", n, name)
	}
}
