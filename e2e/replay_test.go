//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// trafgenConf is 60-byte UDP/IPv4 frames from 198.18.0.1:1024 to
// 198.19.0.1:9 whose last payload bytes count up, with right checksums.
const trafgenConf = `{
  0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
  0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
  0x08, 0x00,
  0x45, 0x00, const16(46), 0x00, 0x00, 0x40, 0x00, 64, 17, csumip(14, 33),
  198, 18, 0, 1, 198, 19, 0, 1,
  const16(1024), const16(9), const16(26), csumudp(14, 34),
  fill(0x41, 14), dinc(0, 255), dinc(0, 255, 3), 0x00, 0x00
}
`

// readCapture returns the records of a pcap file and their times (ns).
func readCapture(t *testing.T, path string) ([][]byte, []int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	var ts []int64
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			return recs, ts
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, data)
		ts = append(ts, ci.Timestamp.UnixNano())
	}
}

// captureTrafgen sends n frames with trafgen on v.Outer, 1 ms apart,
// captured by tcpdump on v.Inner in the namespace, and returns the
// capture's path.
func captureTrafgen(t *testing.T, v *testbed.Veth, dir string, n int) string {
	t.Helper()
	trafgen := testbed.RequireTool(t, "trafgen", "netsniff-ng")
	tcpdump := testbed.RequireTool(t, "tcpdump", "tcpdump")
	conf := filepath.Join(dir, "udp.cfg")
	if err := os.WriteFile(conf, []byte(trafgenConf), 0o644); err != nil {
		t.Fatal(err)
	}
	capPath := filepath.Join(dir, "trafgen.pcap")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dump := v.Command(ctx, tcpdump, "-i", v.Inner, "-w", capPath, "-U", "--immediate-mode", "-s", "0", "-c", strconv.Itoa(n), "udp")
	var derr bytes.Buffer
	dump.Stderr = &derr
	if err := dump.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(derr.String(), "listening on"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tcpdump did not start: %s", derr.String())
		}
	}
	waitCarrier(t, v.Outer)
	gen := exec.CommandContext(ctx, trafgen, "--dev", v.Outer, "--conf", conf, "--num", strconv.Itoa(n), "--gap", "1ms", "--cpus", "1", "--no-cpu-stats", "--qdisc-path")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("trafgen: %v: %s", err, out)
	}
	if err := dump.Wait(); err != nil {
		t.Fatalf("tcpdump: %v: %s", err, derr.String())
	}
	return capPath
}

// TestReplayTrafgenCapture: a capture tcpdump wrote of trafgen's traffic
// on a veth (1000 frames), replayed with wpg send --pcap into pcapfile,
// comes out byte for byte as captured and with the capture's gaps (each
// within 1 µs: pcapfile records the due times, and tcpdump's pcap has µs
// stamps); replayed through a
// template that rewrites addresses and ports, only those fields and the
// checksums differ, and the checksums are right.
func TestReplayTrafgenCapture(t *testing.T) {
	const n = 1000 // 1 s of trafgen at 1 ms
	v := testbed.NewVeth(t)
	dir := t.TempDir()
	capPath := captureTrafgen(t, v, dir, n)
	orig, origTS := readCapture(t, capPath)
	if len(orig) != n {
		t.Fatalf("tcpdump captured %d frames, want %d", len(orig), n)
	}

	// As captured, with its own timing.
	out, errs, code := run(t, dir, "send", "--pcap", capPath, "--backend", "pcapfile", "-o", "same.pcap", "--json")
	if code != 0 {
		t.Fatalf("send --pcap: exit %d: %s", code, errs)
	}
	var rep streamsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Frames != n || len(rep.Streams) != 1 || rep.Streams[0].Frames != n || rep.Streams[0].Rate != "original timing" {
		t.Fatalf("report %s: %v", out, err)
	}
	same, sameTS := readCapture(t, filepath.Join(dir, "same.pcap"))
	if len(same) != n {
		t.Fatalf("%d frames replayed", len(same))
	}
	for i := range same {
		if !bytes.Equal(same[i], orig[i]) {
			t.Fatalf("frame %d differs:\n%x\n%x", i, same[i], orig[i])
		}
		if i > 0 {
			// pcapfile records each frame's due time: the capture's gap
			// (to the µs of tcpdump's pcap).
			if d := (sameTS[i] - sameTS[i-1]) - (origTS[i] - origTS[i-1]); d < -1000 || d > 1000 {
				t.Errorf("gap %d: %d ns, captured %d", i, sameTS[i]-sameTS[i-1], origTS[i]-origTS[i-1])
			}
		}
	}

	// Rewritten: destination MAC, addresses, ports.
	tpl := filepath.Join(dir, "rewrite.wpg.yaml")
	os.WriteFile(tpl, []byte(`
streams:
  - pcap: trafgen.pcap
    timing: original
    speed: 4
    ethernet: {dst: "02:00:00:00:99:99"}
    ipv4: {src: 198.18.7.7, dst: {from: 198.19.1.1, to: 198.19.1.10}}
    udp: {src: 4000, dst: {from: 5000, to: 5004}}
`), 0o644)
	if _, errs, code := run(t, dir, "send", tpl, "--backend", "pcapfile", "-o", "rw.pcap"); code != 0 {
		t.Fatalf("send rewrite: exit %d: %s", code, errs)
	}
	rw, rwTS := readCapture(t, filepath.Join(dir, "rw.pcap"))
	if len(rw) != n {
		t.Fatalf("%d frames rewritten", len(rw))
	}
	for k := range rw {
		f, o := rw[k], orig[k]
		if len(f) != len(o) {
			t.Fatalf("frame %d: %d bytes, captured %d", k, len(f), len(o))
		}
		want := bytes.Clone(o)
		copy(want[0:6], []byte{2, 0, 0, 0, 0x99, 0x99})
		copy(want[26:30], []byte{198, 18, 7, 7})
		copy(want[30:34], []byte{198, 19, 1, byte(1 + k%10)})
		binary.BigEndian.PutUint16(want[34:], 4000)
		binary.BigEndian.PutUint16(want[36:], uint16(5000+k%5))
		// The checksums differ: compare the rest, then check them.
		copy(want[24:26], f[24:26])
		copy(want[40:42], f[40:42])
		if !bytes.Equal(f, want) {
			t.Fatalf("frame %d:\n got %x\nwant %x", k, f, want)
		}
		if header.Checksum(f[14:34], 0) != 0 {
			t.Errorf("frame %d: IPv4 checksum wrong", k)
		}
		udpLen := int(binary.BigEndian.Uint16(f[38:]))
		if header.Checksum(f[34:34+udpLen], header.PseudoSumIPv4(f[26:30], f[30:34], 17, udpLen)) != 0 {
			t.Errorf("frame %d: UDP checksum wrong", k)
		}
		if k > 0 {
			if d := 4*(rwTS[k]-rwTS[k-1]) - (origTS[k] - origTS[k-1]); d < -4000 || d > 4000 {
				t.Errorf("speed 4: gap %d is %d ns, captured %d", k, rwTS[k]-rwTS[k-1], origTS[k]-origTS[k-1])
			}
		}
	}
}

// TestReplayBadCaptureCLI: a truncated capture is a clear input error
// naming the record, before anything is sent.
func TestReplayBadCaptureCLI(t *testing.T) {
	dir := t.TempDir()
	f, _ := os.Create(filepath.Join(dir, "c.pcap"))
	w := pcapgo.NewWriter(f)
	w.WriteFileHeader(65535, 1)
	f.Write(bytes.Repeat([]byte{1}, 10)) // half a record header
	f.Close()
	_, errs, code := run(t, dir, "send", "--pcap", "c.pcap", "--backend", "pcapfile", "-o", "x.pcap")
	if code != 2 || !strings.Contains(errs, "capture c.pcap: record 1 (at byte 24): truncated") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pcap")); err == nil {
		t.Error("an output file was written")
	}
}
