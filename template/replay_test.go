package template

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/frame/pcapread"
	"github.com/wpg-dev/wpg/header"
)

// captureFrames renders n frames of a template (UDP/IPv4 and TCP/IPv6
// alternating, a VLAN tag on every third, unsigned) to replay.
func captureFrames(t *testing.T, n int) [][]byte {
	t.Helper()
	spec, err := Parse("cap", []byte(`
streams:
  - {signature: false, size: 100, ipv4: {src: 198.18.0.1, dst: {from: 198.19.0.1, to: 198.19.0.9}}, udp: {src: 5000, dst: 53}, payload: {text: "hello from a capture"}}
  - {signature: false, size: 120, ipv6: {}, tcp: {src: 40000, dst: 443, flags: [ack, psh]}}
  - {signature: false, size: 90, vlan: {id: 7}, ipv4: {}, udp: {}}
`))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := Preview(spec, n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(pf))
	for i := range pf {
		out[i] = bytes.Clone(pf[i].Bytes)
	}
	return out
}

// gapOf is the capture's (irregular) gap before record i.
func gapOf(i int) time.Duration { return time.Duration(100+(i*37)%900) * time.Microsecond }

// writeCapture writes frames with the gaps of gapOf as pcap or pcapng.
func writeCapture(t *testing.T, path string, frames [][]byte, ng bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts := time.Unix(1_700_000_000, 0)
	var write func(ci gopacket.CaptureInfo, b []byte) error
	if ng {
		w, err := pcapgo.NewNgWriter(f, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Flush()
		write = w.WritePacket
	} else {
		w := pcapgo.NewWriterNanos(f)
		if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
			t.Fatal(err)
		}
		write = w.WritePacket
	}
	for i, b := range frames {
		if i > 0 {
			ts = ts.Add(gapOf(i))
		}
		if err := write(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
}

// renderAll renders every frame of a (non-timed or timed) source.
func renderAll(t *testing.T, src *Source) [][]byte {
	t.Helper()
	var out [][]byte
	buf := [][]byte{make([]byte, src.MaxFrame())}
	lens := []int{0}
	for {
		if src.Render(buf, lens, 0) == 0 {
			return out
		}
		out = append(out, bytes.Clone(buf[0][:lens[0]]))
	}
}

// TestReplayAsCaptured: a pcap and a pcapng capture replay byte for byte,
// once through by default and looping for a larger count.
func TestReplayAsCaptured(t *testing.T) {
	frames := captureFrames(t, 30)
	for _, ng := range []bool{false, true} {
		dir := t.TempDir()
		writeCapture(t, filepath.Join(dir, "c.pcap"), frames, ng)
		tpl := filepath.Join(dir, "r.wpg.yaml")
		spec, err := Parse(tpl, []byte("streams: [{pcap: c.pcap}]")) // relative to the template
		if err != nil {
			t.Fatal(err)
		}
		src, err := Compile(spec, CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := renderAll(t, src)
		src.Close()
		if len(got) != len(frames) {
			t.Fatalf("ng=%v: %d frames, want %d", ng, len(got), len(frames))
		}
		for i := range got {
			if !bytes.Equal(got[i], frames[i]) {
				t.Fatalf("ng=%v: frame %d differs:\n%x\n%x", ng, i, got[i], frames[i])
			}
		}
		if p, d := src.Plan(); p != "replay" || !strings.Contains(d, "30 records") {
			t.Errorf("plan %q %q", p, d)
		}
		// count 75 loops the capture: 2.5 times.
		spec.Streams[0].Count = 75
		src, err = Compile(spec, CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = renderAll(t, src)
		src.Close()
		for i := range got {
			if !bytes.Equal(got[i], frames[i%30]) {
				t.Fatalf("ng=%v loop: frame %d differs", ng, i)
			}
		}
		if len(got) != 75 {
			t.Fatalf("ng=%v loop: %d frames", ng, len(got))
		}
	}
}

// checksumsOK verifies the IPv4 header checksum and the UDP/TCP checksum
// of a frame (untagged or with one tag).
func checksumsOK(t *testing.T, f []byte) {
	t.Helper()
	l3, et := 14, binary.BigEndian.Uint16(f[12:])
	if et == header.EtherTypeVLAN {
		l3, et = 18, binary.BigEndian.Uint16(f[16:])
	}
	var l4 int
	var proto uint8
	var pseudo uint64
	switch et {
	case header.EtherTypeIPv4:
		if c := header.Checksum(f[l3:l3+20], 0); c != 0 {
			t.Errorf("IPv4 header checksum wrong in %x", f)
		}
		l4, proto = l3+20, f[l3+9]
		pseudo = header.PseudoSumIPv4(f[l3+12:l3+16], f[l3+16:l3+20], proto, len(f)-l4)
	case header.EtherTypeIPv6:
		l4, proto = l3+40, f[l3+6]
		pseudo = header.PseudoSumIPv6(f[l3+8:l3+24], f[l3+24:l3+40], proto, len(f)-l4)
	default:
		t.Fatalf("EtherType %#x", et)
	}
	if c := header.Checksum(f[l4:], pseudo); c != 0 {
		t.Errorf("L4 (%d) checksum wrong in %x", proto, f)
	}
}

// TestReplayRewrites: the fields asked for are rewritten with the field
// engine's variations (packet k gets value k), the rest stays as
// captured, checksums are right, an untagged frame gets the VLAN tag, and
// the signature goes only where asked.
func TestReplayRewrites(t *testing.T) {
	frames := captureFrames(t, 12)
	dir := t.TempDir()
	writeCapture(t, filepath.Join(dir, "c.pcap"), frames, false)
	spec, err := Parse(filepath.Join(dir, "r.wpg.yaml"), []byte(`
streams:
  - pcap: c.pcap
    signature: true
    ethernet: {dst: "02:aa:00:00:00:01"}
    vlan: {id: {from: 100, to: 102}}
    ipv4: {src: 10.0.0.1, dst: {from: 10.1.0.1, to: 10.1.0.4}}
    ipv6: {dst: "2001:db8::9"}
    udp: {dst: [7, 9]}
`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := renderAll(t, src)
	if len(got) != len(frames) {
		t.Fatalf("%d frames", len(got))
	}
	for k, f := range got {
		orig := frames[k]
		// Undo the inserted tag to compare the rest.
		in := orig
		if binary.BigEndian.Uint16(orig[12:]) != header.EtherTypeVLAN {
			if binary.BigEndian.Uint16(f[12:]) != header.EtherTypeVLAN || len(f) != len(orig)+4 {
				t.Fatalf("frame %d: no tag inserted: %x", k, f)
			}
			f = append(bytes.Clone(f[:12]), f[16:]...)
		}
		if vid := binary.BigEndian.Uint16(got[k][14:]) & 0xfff; vid != uint16(100+k%3) {
			t.Errorf("frame %d: vlan %d, want %d", k, vid, 100+k%3)
		}
		checksumsOK(t, got[k])
		if !bytes.Equal(f[:6], []byte{2, 0xaa, 0, 0, 0, 1}) || !bytes.Equal(f[6:12], in[6:12]) {
			t.Errorf("frame %d: MACs %x", k, f[:12])
		}
		switch binary.BigEndian.Uint16(f[12:]) {
		case header.EtherTypeVLAN: // the third stream: tagged in the capture, IPv4/UDP
			f = append(bytes.Clone(f[:12]), f[16:]...)
			in = append(bytes.Clone(in[:12]), in[16:]...)
			fallthrough
		case header.EtherTypeIPv4:
			ip := f[14:]
			if !bytes.Equal(ip[12:16], []byte{10, 0, 0, 1}) || !bytes.Equal(ip[16:20], []byte{10, 1, 0, byte(1 + k%4)}) {
				t.Errorf("frame %d: addresses %v %v", k, ip[12:16], ip[16:20])
			}
			if d := binary.BigEndian.Uint16(ip[22:]); d != []uint16{7, 9}[k%2] {
				t.Errorf("frame %d: udp dst %d", k, d)
			}
			// Everything else as captured: the IPv4 header up to the
			// checksum, the source port, the payload (but the signature).
			if !bytes.Equal(ip[:10], in[14:24]) || !bytes.Equal(ip[20:22], in[34:36]) {
				t.Errorf("frame %d: IPv4 header or source port changed: %x vs %x", k, ip[:22], in[14:36])
			}
			if !bytes.Equal(f[42:len(f)-20], in[42:len(in)-20]) {
				t.Errorf("frame %d: payload changed", k)
			}
		case header.EtherTypeIPv6:
			ip := f[14:]
			if !bytes.Equal(ip[8:24], in[22:38]) || ip[39] != 9 || ip[24] != 0x20 {
				t.Errorf("frame %d: IPv6 addresses %x", k, ip[8:40])
			}
		}
		// Signed: the last 20 bytes are the signature of stream 0, seq k.
		tail := got[k][len(got[k])-20:]
		if binary.BigEndian.Uint16(tail) != 0x5750 || binary.BigEndian.Uint64(tail[4:])&(1<<56-1) != uint64(k) {
			t.Errorf("frame %d: signature %x", k, tail)
		}
	}
}

// TestReplayOriginalTiming: with timing: original the frames are due at
// the capture's own times, divided by speed, and the next pass starts one
// mean gap after the last record.
func TestReplayOriginalTiming(t *testing.T) {
	frames := captureFrames(t, 1000)
	dir := t.TempDir()
	writeCapture(t, filepath.Join(dir, "c.pcap"), frames, false)
	spec, err := Parse(filepath.Join(dir, "r.wpg.yaml"), []byte("streams: [{pcap: c.pcap, timing: original, speed: 2, count: 1500}]"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bufs, lens, dues := [][]byte{make([]byte, src.MaxFrame())}, []int{0}, []int64{0}
	src.RecordDues(dues)
	src.Start(0)
	var at, span time.Duration
	for i := 1; i < 1000; i++ {
		span += gapOf(i)
	}
	lap := span + span/999
	for k := range 1500 {
		due, ok := src.NextDue()
		if !ok {
			t.Fatalf("ended after %d frames", k)
		}
		i := k % 1000
		switch {
		case k == 1000:
			at = lap
		case i > 0:
			at += gapOf(i)
		}
		if want := int64(at / 2); due < want-1 || due > want+1 {
			t.Fatalf("frame %d due at %d, want %d", k, due, want)
		}
		if src.Render(bufs, lens, due) != 1 || dues[0] != due || !bytes.Equal(bufs[0][:lens[0]], frames[i]) {
			t.Fatalf("frame %d not rendered as captured", k)
		}
	}
	if _, ok := src.NextDue(); ok {
		t.Error("more than the count")
	}
}

// TestReplayBadCapture: a truncated capture, one that is not a capture,
// and a missing one give errors that name the file and the record.
func TestReplayBadCapture(t *testing.T) {
	frames := captureFrames(t, 5)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pcap")
	writeCapture(t, good, frames, false)
	data, _ := os.ReadFile(good)
	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, data[:len(data)-30], 0o644)
	junk := filepath.Join(dir, "junk.pcap")
	os.WriteFile(junk, []byte("this is not a capture at all"), 0o644)
	for _, c := range []struct{ file, want string }{
		{cut, "record 5 (at byte"},
		{junk, "not a pcap or pcapng file"},
		{filepath.Join(dir, "missing.pcap"), "no such file"},
	} {
		spec, err := Parse(filepath.Join(dir, "t.wpg.yaml"), []byte("streams: [{pcap: "+filepath.Base(c.file)+"}]"))
		if err != nil {
			t.Fatal(err)
		}
		err = spec.LoadCaptures()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.file) {
			t.Errorf("%s: %v, want …%s…", c.file, err, c.want)
		}
		if c.file == cut && !errors.Is(err, pcapread.ErrTruncated) {
			t.Errorf("truncated: %v does not wrap ErrTruncated", err)
		}
	}
}

// TestReplayCaptureFailsMidRun: a capture cut short while it is replayed
// ends the source, and Err names the record.
func TestReplayCaptureFailsMidRun(t *testing.T) {
	frames := captureFrames(t, 30)
	dir := t.TempDir()
	path := filepath.Join(dir, "c.pcap")
	writeCapture(t, path, frames, false)
	spec, err := Parse(filepath.Join(dir, "r.wpg.yaml"), []byte("streams: [{pcap: c.pcap, count: 100}]"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// Cut the file inside record 10: the first pass is already buffered,
	// the second reads the cut file.
	fi, _ := os.Stat(path)
	off := int64(24)
	for i := range 9 {
		off += 16 + int64(len(frames[i]))
	}
	if err := os.Truncate(path, off+20); err != nil || fi.Size() <= off+20 {
		t.Fatal(err)
	}
	got := renderAll(t, src)
	if len(got) < 30 || len(got) >= 100 {
		t.Fatalf("%d frames before the failure", len(got))
	}
	if err := src.Err(); err == nil || !strings.Contains(err.Error(), "record 10") || !errors.Is(err, pcapread.ErrTruncated) {
		t.Fatalf("Err %v", err)
	}
}

// TestTimedAndReplayRenderDoNotAllocate: the hot loop's Render of a timed
// source and of a replay (within one pass of the capture) allocates
// nothing.
func TestTimedAndReplayRenderDoNotAllocate(t *testing.T) {
	frames := captureFrames(t, 30)
	dir := t.TempDir()
	writeCapture(t, filepath.Join(dir, "c.pcap"), frames, false)
	for _, yaml := range []string{
		timedYAML,
		"streams: [{pcap: c.pcap, count: 100000, ipv4: {dst: {from: 10.0.0.1, to: 10.0.0.9}}, udp: {src: 7}, signature: true}]",
		"streams: [{pcap: c.pcap, timing: original, ipv4: {dst: 10.0.0.1}}, {pcap: c.pcap, timing: original}]",
	} {
		spec, err := Parse(filepath.Join(dir, "a.wpg.yaml"), []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		spec.Streams[0].Count = 100000
		src, err := Compile(spec, CompileOptions{Plan: PlanStream})
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([][]byte, 8)
		for i := range bufs {
			bufs[i] = make([]byte, src.MaxFrame())
		}
		lens := make([]int, 8)
		dues := make([]int64, 8)
		src.RecordDues(dues)
		src.Start(0)
		now := int64(0)
		// Warm up past the first lap's read-ahead, then measure.
		a := testing.AllocsPerRun(20, func() {
			if src.Timed() {
				d, _ := src.NextDue()
				now = max(now, d)
				src.Render(bufs[:src.DueBy(now, 1)], lens, now)
				return
			}
			src.Render(bufs[:1], lens, now)
		})
		if a != 0 {
			t.Errorf("%.60s…: %.1f allocations per Render", yaml, a)
		}
		src.Close()
	}
}
