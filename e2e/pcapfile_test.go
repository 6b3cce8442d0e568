package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// tsharkPrefs turn on the checksum validation tshark leaves off by default
// (ICMP and ICMPv6 checksums are always checked), and decode the example's
// UDP ports as plain data so that no port-guessing dissector takes over.
var tsharkPrefs = []string{
	"-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
	"-d", "udp.port==5001,data", "-d", "udp.port==7001,data", "-d", "udp.port==9001,data",
}

func repoFile(t *testing.T, rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", rel)
}

func tshark(t *testing.T, bin, pcap string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"-r", pcap}, tsharkPrefs...), args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestPcapfileMixedTemplate sends examples/mixed.wpg.yaml into a pcap file
// and has tshark check it: every field the template varies, frame by
// frame; the stream interleaving by share; IMIX proportions; checksums; no
// malformed packet.
func TestPcapfileMixedTemplate(t *testing.T) {
	ts := testbed.RequireTool(t, "tshark", "tshark")
	wpg := testbed.Wpg(t)
	dir := t.TempDir()
	pcap := filepath.Join(dir, "out.pcap")
	const total = 100000
	cmd := exec.Command(wpg, "send", repoFile(t, "examples/mixed.wpg.yaml"), "--backend", "pcapfile", "-o", pcap, "--count", strconv.Itoa(total))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wpg send: %v\n%s", err, out)
	}

	// No malformed packet, no expert warning or error.
	if bad := tshark(t, ts, pcap, "-Y", "_ws.malformed || _ws.expert.severity >= warning"); strings.TrimSpace(bad) != "" {
		t.Fatalf("tshark reports problems:\n%s", firstLines(bad, 10))
	}

	fields := []string{
		"frame.number", "frame.len", "eth.src", "eth.dst", "ieee8021ad.id", "vlan.id", "vlan.priority",
		"ip.src", "ip.dst", "ip.dsfield.dscp", "ip.ttl", "ip.checksum.status",
		"ipv6.src", "ipv6.dst", "ipv6.flow", "ipv6.hlim",
		"udp.srcport", "udp.dstport", "udp.checksum.status",
		"tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.flags", "tcp.checksum.status",
		"icmp.type", "icmp.ident", "icmp.seq", "icmp.checksum.status",
		"arp.opcode", "arp.src.hw_mac", "arp.src.proto_ipv4", "arp.dst.proto_ipv4",
		"data.data",
	}
	args := []string{"-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out := tshark(t, ts, pcap, args...)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != total {
		t.Fatalf("tshark read %d frames, want %d", len(lines), total)
	}
	col := map[string]int{}
	for i, f := range fields {
		col[f] = i
	}

	// The streams in the order the template lists them, with their shares;
	// smooth weighted round-robin gives the exact sending order.
	names := []string{"udp4-imix", "tcp6-syn", "vlan-udp", "qinq-udp", "ping4", "arp"}
	shares := []int{4, 2, 1, 1, 1, 1}
	cur := make([]int, len(shares))
	k := make([]int, len(shares)) // per-stream packet index
	imix := map[int]int{}
	ports := map[string]bool{}
	for n, line := range lines {
		v := strings.Split(line, "|")
		get := func(f string) string { return v[col[f]] }
		// Which stream the template says comes next.
		best := 0
		for i := range cur {
			cur[i] += shares[i]
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= 10
		i := k[best]
		k[best]++
		fail := func(format string, a ...any) {
			t.Helper()
			t.Fatalf("frame %d (stream %s, packet %d): %s\n%s", n+1, names[best], i, fmt.Sprintf(format, a...), line)
		}
		want := func(f, w string) {
			t.Helper()
			if got := get(f); got != w {
				fail("%s = %q, want %q", f, got, w)
			}
		}
		for _, f := range []string{"ip.checksum.status", "udp.checksum.status", "tcp.checksum.status", "icmp.checksum.status"} {
			if s := get(f); s != "" && s != "1" {
				fail("%s = %s (1 is good)", f, s)
			}
		}
		switch names[best] {
		case "udp4-imix":
			want("ip.src", fmt.Sprintf("198.18.0.%d", 1+i%100))
			want("ip.dst", "198.19.0.1")
			want("ip.dsfield.dscp", []string{"0", "10", "46"}[i%3])
			want("udp.srcport", strconv.Itoa(10000+2*(i%5000)))
			want("udp.dstport", "5001")
			l, _ := strconv.Atoi(get("frame.len"))
			imix[l]++
		case "tcp6-syn":
			want("ipv6.src", fmt.Sprintf("2001:2::%x", 1+i%255))
			want("ipv6.dst", "2001:2::1:1")
			want("ipv6.flow", fmt.Sprintf("0x%06x", 1000-i%1000))
			want("tcp.seq_raw", strconv.Itoa(1000+1000*i))
			want("tcp.flags", "0x0002")
			want("tcp.dstport", "80")
			want("frame.len", "128")
			ports[get("tcp.srcport")] = true
		case "vlan-udp":
			want("vlan.id", strconv.Itoa(100+i%4))
			want("vlan.priority", "3")
			want("frame.len", strconv.Itoa(80+4*(i%5)))
			want("ip.ttl", []string{"64", "32", "16"}[i%3])
			if d := get("data.data"); !strings.HasPrefix(d, fmt.Sprintf("%08x", i%1000001)) {
				fail("payload counter %q, want %08x", d[:8], i)
			}
		case "qinq-udp":
			want("ieee8021ad.id", "200")
			want("vlan.id", []string{"10", "20", "30"}[i%3])
			want("frame.len", "96")
		case "ping4":
			want("icmp.type", "8")
			want("icmp.ident", "4242")
			want("icmp.seq", strconv.Itoa(i%65536))
		case "arp":
			want("arp.opcode", "1")
			want("eth.dst", "ff:ff:ff:ff:ff:ff")
			want("arp.src.hw_mac", []string{"02:00:00:00:04:01", "02:00:00:00:04:02"}[i%2])
			want("arp.src.proto_ipv4", []string{"198.18.4.1", "198.18.4.2"}[i%2])
			want("arp.dst.proto_ipv4", fmt.Sprintf("198.19.4.%d", 1+i%20))
		}
		// The signature (last 20 bytes, in the data tshark shows for UDP and ICMP).
		if d := get("data.data"); d != "" && len(d) >= 40 {
			sig := d[len(d)-40:]
			if wantSig := fmt.Sprintf("5750%04x%016x", best, i); sig[:24] != wantSig {
				fail("signature %s, want %s…", sig[:24], wantSig)
			}
		}
		if n+1 == 1000 {
			// Spelled out: frame 1000 is udp4-imix packet 399 (shares 4 of 10).
			want("ip.src", "198.18.0.100")
			want("udp.srcport", "10798")
			t.Logf("frame 1000: stream %s packet %d: %s", names[best], i, line)
		}
	}
	if want := []int{40000, 20000, 10000, 10000, 10000, 10000}; fmt.Sprint(k) != fmt.Sprint(want) {
		t.Fatalf("frames per stream %v, want %v", k, want)
	}
	// IMIX 7:4:1 of 64/594/1514, within 1 %.
	n0 := float64(k[0])
	for size, w := range map[int]float64{64: 7.0 / 12, 594: 4.0 / 12, 1514: 1.0 / 12} {
		if got := float64(imix[size]) / n0; got < w-0.01 || got > w+0.01 {
			t.Errorf("IMIX share of %d-byte frames %.4f, want %.4f ± 0.01", size, got, w)
		}
	}
	if len(imix) != 3 {
		t.Errorf("IMIX sizes %v", imix)
	}
	if len(ports) < 1000 {
		t.Errorf("random TCP source ports: only %d distinct values in %d frames", len(ports), k[1])
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
